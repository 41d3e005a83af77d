import Foundation
import HealthImport
import HealthModel

/// Workout routes (HEALTHKIT.md §13): the shared route layout, the route snapshot file and the GPX reader.
enum RouteHarnesses {
    /// A route with every column, and a one-point route without any.
    static let routes: [WorkoutRoute] = {
        let workout = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        return [
            WorkoutRoute(
                workout: workout, path: "/workout-routes/route.gpx",
                points: [
                    RoutePoint(
                        time: 1_700_000_000_000_000, latitude: 48.8583701, longitude: 2.2944813, elevation: 35.2,
                        speed: 2.9, course: 120),
                    RoutePoint(time: 1_700_000_001_000_000, latitude: 48.8583912, longitude: 2.294512, elevation: 35.4),
                ]),
            WorkoutRoute(workout: workout, path: "", points: [RoutePoint(time: 0, latitude: -33.9, longitude: 151.2)]),
        ]
    }()

    /// A route as the protocol and the log write it: if it decodes, its encoding decodes to the same bytes.
    static let route = ObjectHarnesses.layout(
        "route", "ByteReader.readRoute (the protocol's, log's and snapshot's route layout); round trip", routes)

    /// A route snapshot (CRC fixed when byte 0 is odd): re-encoded, restored or refused.
    static let snapshot = ObjectHarnesses.snapshot(
        "route-snapshot", "RouteSnapshotCodec.decode (CRC fixed when byte 0 is odd), re-encode, restore", routes)

    /// A GPX route file: its points, when accepted, are places by time and make a route the server accepts.
    static let gpx = Harness(
        "gpx", "WorkoutRoute.points(gpx:) (the import's bounded GPX reader); accepted points make a valid route",
        seeds: {
            let points = routes[0].points.map { point in
                "<trkpt lat=\"\(point.latitude)\" lon=\"\(point.longitude)\"><ele>35.2</ele>"
                    + "<time>2023-11-14T22:13:2\(point.time % 10_000_000 / 1_000_000)Z</time>"
                    + "<extensions><speed>2.9</speed><course>120</course></extensions></trkpt>"
            }
            return [
                Array(
                    ("<?xml version=\"1.0\"?><gpx version=\"1.1\"><trk><trkseg>" + points.joined()
                        + "</trkseg></trk></gpx>").utf8),
                Array("<gpx><trkpt lat='1' lon='2'><time>2024-01-01T08:12:01.25+01:00</time></trkpt></gpx>".utf8),
            ]
        }
    ) { input in
        guard let points = attempt({ try WorkoutRoute.points(gpx: input.rest()) }) else { return }
        require(!points.isEmpty, "an accepted route file has no points")
        require(
            points.allSatisfy { abs($0.latitude) <= 90 && abs($0.longitude) <= 180 },
            "an accepted route point is not a place")
        require(zip(points, points.dropFirst()).allSatisfy { $0.time <= $1.time }, "accepted points are not by time")
        // The reader checks points by the server's rule (RoutePoint.violation): what it accepts, hkd stores.
        require(
            (try? WorkoutRoute(workout: UUID(), path: "", points: points).validate()) != nil,
            "accepted points make a route the server refuses")
    }
}
