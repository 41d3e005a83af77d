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
        Self.expectRejected("<gpx>" + many + "</gpx>", "route file has too many points", "over 86400")
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
