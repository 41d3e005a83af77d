import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthImport

/// Workout routes of an export: GPX files in the zip (or beside export.xml) read whole with a bounded reader,
/// inline `<Location>`s of older exports, and what is refused.
struct RouteImportTests {
    static let start = Date(timeIntervalSince1970: 1_704_093_120)  // 2024-01-01T07:12:00Z
    static let path = "/workout-routes/route_2024-01-01_8.12am.gpx"

    static func expectRejected(_ gpx: String, _ reason: String, _ detail: String) {
        do {
            _ = try GPXReader.points(Array(gpx.utf8))
            Issue.record("accepted: \(detail)")
        } catch let rejection as Rejection {
            #expect(rejection.reason == reason && rejection.detail.contains(detail), "\(rejection.detail)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("a GPX file's points keep time, place, elevation, speed and course at the stored precision")
    func reads() throws {
        let written = RouteExport.points(30, seed: TestSeed.value(7), start: Self.start)
        let points = try GPXReader.points(Array(RouteExport.gpx(written).utf8))
        #expect(points.count == 30)
        for (point, source) in zip(points, written) {
            #expect(point.latitude == source.latitude && point.longitude == source.longitude)
            #expect(abs(point.elevation! - source.elevation) < 1e-4 && abs(point.speed! - source.speed) < 1e-5)
            #expect(abs(point.course! - source.course) < 1e-4)
        }
        #expect(points.first?.time == 1_704_093_120_000_000 && points.last?.time == 1_704_093_149_000_000)
        // Fractions of a second, offsets, single quotes, a point without extensions, out of order.
        let odd = """
            <gpx><trk><trkseg>
            <trkpt lat='1.5' lon='-2.25'><time>2024-01-01T08:12:01.250+01:00</time></trkpt>
            <trkpt lon="3" lat="4"><ele>12</ele><time>2024-01-01T07:12:00Z</time></trkpt>
            </trkseg></trk></gpx>
            """
        let sorted = try GPXReader.points(Array(odd.utf8))
        #expect(sorted.map(\.time) == [1_704_093_120_000_000, 1_704_093_121_250_000])
        #expect(sorted[0].elevation == 12 && sorted[1].elevation == nil && sorted[1].longitude == -2.25)
    }

    @Test("malformed GPX is refused naming the problem; sizes and counts are bounded")
    func refuses() {
        let time = "<time>2024-01-01T07:12:00Z</time>"
        Self.expectRejected("<kml></kml>", "route file is not GPX", "no <gpx>")
        Self.expectRejected("<gpx></gpx>", "route file has no points", "no <trkpt>")
        Self.expectRejected(
            "<gpx><trkpt lon=\"2\">\(time)</trkpt></gpx>", "route file point is not valid", "no latitude")
        Self.expectRejected(
            "<gpx><trkpt lat=\"91\" lon=\"2\">\(time)</trkpt></gpx>", "route file point is not valid", "±90")
        Self.expectRejected(
            "<gpx><trkpt lat=\"1\" lon=\"2\"><time>yesterday</time></trkpt></gpx>", "route file point is not valid",
            "no <time>")
        Self.expectRejected(
            "<gpx><trkpt lat=\"1\" lon=\"2\"><ele>high</ele>\(time)</trkpt></gpx>", "route file point is not valid",
            "<ele> is not a number")
        Self.expectRejected(
            "<gpx><trkpt lat=\"1\" lon=\"2\">\(time)" + String(repeating: " ", count: 5000) + "</trkpt></gpx>",
            "route file point is not valid", "no </trkpt> within")
        let many = String(
            repeating: "<trkpt lat=\"1\" lon=\"2\">\(time)</trkpt>", count: WorkoutRoute.Limits.maxPoints + 1)
        Self.expectRejected(
            "<gpx>" + many + "<trkpt lat=\"1\" lon=\"2\">\(time)</trkpt></gpx>", "route file has too many points",
            "route file has 86402 points; at most 86400")
    }

    @Test("a point the server would refuse fails the whole file, naming the file, the point and the rule")
    func refusesWhatTheServerRefuses() throws {
        func point(_ extensions: String, time: String = "2024-01-01T07:12:00Z") -> String {
            "<trkpt lat=\"1\" lon=\"2\"><time>\(time)</time>\(extensions)</trkpt>"
        }
        let good = point("<ele>35</ele><speed>3</speed>", time: "2024-01-01T07:11:59Z")
        let cases = [
            (point("<extensions><speed>-1e308</speed></extensions>"), "its speed is not a finite 32-bit float"),
            (point("<ele>1e39</ele>"), "its elevation is not a finite 32-bit float"),
            (point("<extensions><course>-3.5e38</course></extensions>"), "its course is not a finite 32-bit float"),
            (point("", time: "0000-06-01T00:00:00Z"), "it lies outside years 0001–9999"),
        ]
        for (bad, rule) in cases {
            let gpx = "<gpx>\(good)\(bad)</gpx>"
            do {
                _ = try GPXReader.points(Array(gpx.utf8), path: Self.path)
                Issue.record("accepted: \(rule)")
            } catch let rejection as Rejection {
                #expect(rejection.reason == "route file point is not valid")
                #expect(
                    rejection.detail.hasPrefix("route file \"\(Self.path)\" point 1 (byte \(5 + good.utf8.count)): "),
                    "\(rejection.detail)")
                #expect(rejection.detail.contains(rule), "\(rejection.detail)")
            }
        }
        // The server's check (WorkoutRoute.validate) refuses such a point for the same rule.
        let refused = RoutePoint(time: 1_704_093_120_000_000, latitude: 1, longitude: 2, speed: -1e308)
        do {
            try WorkoutRoute(workout: UUID(), path: Self.path, points: [refused]).validate()
            Issue.record("the server's check accepted a speed of -1e308")
        } catch let error as HealthError {
            #expect(
                error.code == .invalidSample
                    && error.message.hasSuffix("point 0: its speed is not a finite 32-bit float"))
        }
        // Values a Float holds, at the edges, are kept.
        let edges = point(
            "<ele>-3.4e38</ele><extensions><speed>3.4e38</speed></extensions>", time: "9999-12-31T23:59:59Z")
        let kept = try GPXReader.points(Array("<gpx>\(good)\(edges)</gpx>".utf8))
        #expect(kept.count == 2)
        #expect(throws: Never.self) { try WorkoutRoute(workout: UUID(), path: "", points: kept).validate() }
    }

    @Test("a route file with a bad point or inline locations with a bad one are rejected whole; the rest imports")
    func badPointRejectsOnlyItsRoute() throws {
        let written = RouteExport.points(12, seed: TestSeed.value(4), start: Self.start)
        var bad = written
        bad[7].speed = -1e308
        let badPath = "/workout-routes/route_bad.gpx"
        var inline = Array(written.prefix(3))
        inline[1].elevation = 1e39
        var xml = RouteExport.document(
            path: Self.path, start: "2024-01-01 08:12:00 +0100", end: "2024-01-01 08:32:00 +0100")
        xml =
            xml.replacingOccurrences(of: "</HealthData>", with: "") + """
                 <Workout workoutActivityType="HKWorkoutActivityTypeWalking" duration="5" sourceName="Watch" startDate="2024-01-02 08:00:00 +0100" endDate="2024-01-02 08:05:00 +0100">
                  <WorkoutRoute><FileReference path="\(badPath)"/></WorkoutRoute>
                 </Workout>
                """
            + RouteExport.document(
                path: "/workout-routes/route_3.gpx", start: "2024-01-03 08:12:00 +0100",
                end: "2024-01-03 08:32:00 +0100", inline: inline
            ).components(separatedBy: "<HealthData locale=\"en_US\">")[1]
        let zip = ZipWriter.archive([
            .init(name: "apple_health_export/export.xml", data: Array(xml.utf8)),
            .init(name: "apple_health_export" + Self.path, data: Array(RouteExport.gpx(written).utf8)),
            .init(name: "apple_health_export" + badPath, data: Array(RouteExport.gpx(bad).utf8)),
            .init(name: "apple_health_export/workout-routes/route_3.gpx", data: Array(RouteExport.gpx(written).utf8)),
        ])
        let reader = try ExportReader(bytes: Data(zip), subject: "anna")
        while try reader.nextBatch() != nil {}
        let workouts = reader.takeWorkouts()
        let routes = reader.takeRoutes()
        #expect(workouts.count == 3)
        #expect(routes.map(\.path).sorted() == [Self.path, "/workout-routes/route_3.gpx"])
        for route in routes {
            #expect(route.points.count == 12)
            #expect(throws: Never.self) { try route.validate() }
        }
        let summary = reader.summary
        #expect(summary.routes == 2 && summary.workouts == 3)
        #expect(
            summary.rejected.map(\.reason).sorted() == ["route file point is not valid", "route location is not valid"])
        let file = try #require(summary.rejected.first { $0.reason == "route file point is not valid" })
        #expect(
            file.example.contains("route_bad.gpx") && file.example.contains("point 7") && file.example.contains("speed")
        )
        let location = try #require(summary.rejected.first { $0.reason == "route location is not valid" })
        #expect(location.example == "inline route location 1: its elevation is not a finite 32-bit float")
    }

    @Test("an export.zip's route files and inline locations become routes of their workout; a missing file is rejected")
    func imports() throws {
        let written = RouteExport.points(12, seed: TestSeed.value(3), start: Self.start)
        let xml = RouteExport.document(
            path: Self.path, start: "2024-01-01 08:12:00 +0100", end: "2024-01-01 08:32:00 +0100",
            inline: Array(written.prefix(3)))
        let missing =
            xml.replacingOccurrences(of: "</HealthData>", with: "") + """
                 <Workout workoutActivityType="HKWorkoutActivityTypeWalking" duration="5" sourceName="Watch" startDate="2024-01-02 08:00:00 +0100" endDate="2024-01-02 08:05:00 +0100">
                  <WorkoutRoute><FileReference path="/workout-routes/route_gone.gpx"/></WorkoutRoute>
                 </Workout>
                </HealthData>
                """
        let zip = ZipWriter.archive([
            .init(name: "apple_health_export/export.xml", data: Array(missing.utf8)),
            .init(name: "apple_health_export" + Self.path, data: Array(RouteExport.gpx(written).utf8)),
        ])
        let reader = try ExportReader(bytes: Data(zip), subject: "anna")
        while try reader.nextBatch() != nil {}
        let workouts = reader.takeWorkouts()
        let routes = reader.takeRoutes()
        #expect(workouts.count == 2 && routes.count == 2)
        let inline = try #require(routes.first { $0.path.isEmpty })
        let file = try #require(routes.first { $0.path == Self.path })
        #expect(inline.workout == workouts[0].uuid && file.workout == workouts[0].uuid)
        #expect(inline.points.count == 3 && file.points.count == 12)
        #expect(file.points.map { $0.latitude } == written.map { $0.latitude })
        #expect(file.uuid == file.contentID)
        try file.validate()
        let summary = reader.summary
        #expect(summary.routes == 2)
        #expect(summary.rejected.map(\.reason) == ["route file is missing"])
        #expect(summary.rejected.first?.example.contains("route_gone.gpx") == true)
    }
}
