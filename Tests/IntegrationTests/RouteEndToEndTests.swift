import Foundation
import HKQKit
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Workout routes through the real hkd and hkq (HEALTHKIT.md §13): an unpacked export whose workout names a GPX
/// file beside export.xml and holds inline locations, `hkq route` as rows and as GPX, across a kill -9 after the
/// acknowledgements; grants under the workout type; a deleted workout's routes no longer shown.
@Suite("routes end to end", .serialized)
struct RouteEndToEndTests {
    static func run(_ arguments: [String]) async -> (status: Int32, out: String, err: String) {
        let (console, out, err) = Console.capturing()
        let status = await HKQ.standard.run(arguments: arguments, environment: [:], console: console)
        return (status, out.text, err.text)
    }

    @Test("a route file and inline locations: imported, printed as rows and GPX, the same after kill -9")
    func importPrintRestart() async throws {
        let directory = try TestDirectory(prefix: "hk-routes")
        let written = RouteExport.points(
            40, seed: TestSeed.value(5), start: Date(timeIntervalSince1970: 1_704_093_120))
        let path = "/workout-routes/route_2024-01-01_8.12am.gpx"
        let xml = RouteExport.document(
            path: path, start: "2024-01-01 08:12:00 +0100", end: "2024-01-01 08:32:00 +0100",
            inline: Array(written.suffix(2)))
        try FileManager.default.createDirectory(
            atPath: directory.appending("workout-routes"), withIntermediateDirectories: true)
        try Data(RouteExport.gpx(written).utf8).write(to: URL(fileURLWithPath: directory.appending(path)))
        let export = directory.appending("export.xml")
        try Data(xml.utf8).write(to: URL(fileURLWithPath: export))
        let hkd = try await TestServer(arguments: ["--http-listen", "127.0.0.1:0"])
        let imported = await Self.run(hkd.hkqServer + ["--subject", "anna", "--format", "json", "import", export])
        #expect(imported.status == 0, "\(imported.err)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(imported.out.utf8)) as? [String: Any])
        #expect(summary["routes"] as? Int == 2 && summary["routesInserted"] as? Int == 2, "\(imported.out)")
        #expect((summary["rejected"] as? [Any])?.isEmpty == true, "\(imported.out)")
        let client = hkd.client()
        let workout = try #require(try await client.workouts(subject: "anna").workouts.first?.workout)
        client.close()

        func expectRoute(_ server: TestServer) async throws {
            let rows = await Self.run(
                server.hkqServer + [
                    "--subject", "anna", "--format", "csv", "route", workout.uuid.uuidString, "--tz", "UTC",
                ])
            #expect(rows.status == 0, "\(rows.err)")
            let lines = rows.out.split(separator: "\n")
            #expect(lines.first == "time,latitude,longitude,elevation,speed,course,route")
            #expect(lines.count == 1 + 40 + 2)
            // The file's points first (they start first), each as written.
            for (line, point) in zip(lines.dropFirst(), written) {
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                #expect(fields[0] == Substring(point.time) && Double(fields[1]) == point.latitude, "\(line)")
                #expect(Double(fields[2]) == point.longitude)
                #expect(
                    abs(Double(fields[3])! - point.elevation) < 1e-4 && abs(Double(fields[4])! - point.speed) < 1e-5)
            }
            let gpx = await Self.run(
                server.hkqServer + ["--subject", "anna", "route", workout.uuid.uuidString, "--gpx"])
            #expect(gpx.out.hasPrefix("<?xml") && gpx.out.components(separatedBy: "<trkpt ").count == 43)
            #expect(gpx.out.components(separatedBy: "<trkseg>").count == 3)
        }
        try await expectRoute(hkd)

        // Over HTTP, the GPX document is labelled as one, asked for by the parameter or by Accept.
        let port = try HTTPAPITests.httpPort(of: hkd)
        let target = "/v1/subjects/anna/workouts/\(workout.uuid.uuidString)/route"
        let responses = try HTTPAPITests.exchange(
            [
                HTTPAPITests.get(target + "?gpx", token: hkd.token),
                HTTPAPITests.get(target, token: hkd.token, accept: "application/gpx+xml"),
                HTTPAPITests.get(target, token: hkd.token),
            ], port: port)
        #expect(responses.count == 3)
        for gpx in responses.prefix(2) {
            #expect(gpx.status == 200 && gpx.headers["content-type"] == "application/gpx+xml", "\(gpx.headers)")
            #expect(gpx.body.hasPrefix("<?xml") && gpx.body.components(separatedBy: "<trkpt ").count == 43)
        }
        #expect(responses.last?.headers["content-type"] == "application/json")
        #expect(responses.last?.body.hasPrefix("[") == true)
        await hkd.kill()
        let restarted = try await hkd.restart()
        try await expectRoute(restarted)

        // A workout's routes go with it.
        let admin = restarted.client()
        defer { admin.close() }
        #expect(try await admin.deleteWorkouts([workout.uuid], subject: "anna") == 1)
        #expect(try await admin.routes(of: workout.uuid, subject: "anna").isEmpty)
        let gone = await Self.run(restarted.hkqServer + ["--subject", "anna", "route", workout.uuid.uuidString])
        #expect(gone.status != 0 && gone.err.contains("has no route"), "\(gone.err)")
        await restarted.stop()
    }

    @Test("a route file with a point hkd refuses is a rejection; the import goes on and stores everything else")
    func badPointRejectsItsRoute() async throws {
        let directory = try TestDirectory(prefix: "hk-routes-bad")
        let written = RouteExport.points(20, seed: TestSeed.value(6), start: Date(timeIntervalSince1970: 1_704_093_120))
        var fast = written
        fast[5].speed = -1e308  // a Double, but no Float: hkd stores f32 and refuses the infinite speed
        var ancient = written
        ancient[9].time = "0000-06-01T07:12:09Z"  // before year 0001
        try FileManager.default.createDirectory(
            atPath: directory.appending("workout-routes"), withIntermediateDirectories: true)
        let files = [("route_good.gpx", written), ("route_fast.gpx", fast), ("route_ancient.gpx", ancient)]
        var workouts: [String] = []
        for (day, (name, points)) in files.enumerated() {
            try Data(RouteExport.gpx(points).utf8).write(
                to: URL(fileURLWithPath: directory.appending("workout-routes/" + name)))
            let document = RouteExport.document(
                path: "/workout-routes/" + name, start: "2024-01-0\(day + 1) 08:12:00 +0100",
                end: "2024-01-0\(day + 1) 08:32:00 +0100", inline: day == 0 ? Array(written.suffix(2)) : [])
            let body = document.components(separatedBy: "<HealthData locale=\"en_US\">\n")[1]
            workouts.append(body.components(separatedBy: "</HealthData>")[0])
        }
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
            \(workouts.joined())</HealthData>

            """
        let export = directory.appending("export.xml")
        try Data(xml.utf8).write(to: URL(fileURLWithPath: export))
        let hkd = try await TestServer()
        let imported = await Self.run(hkd.hkqServer + ["--subject", "anna", "--format", "json", "import", export])
        #expect(imported.status == 3, "the two routes are rejected: \(imported.err)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(imported.out.utf8)) as? [String: Any])
        #expect(summary["workouts"] as? Int == 3 && summary["workoutsInserted"] as? Int == 3, "\(imported.out)")
        #expect(summary["routes"] as? Int == 2 && summary["routesInserted"] as? Int == 2, "\(imported.out)")
        let rejected = try #require(summary["rejected"] as? [[String: Any]])
        #expect(rejected.count == 1 && rejected.first?["reason"] as? String == "route file point is not valid")
        #expect(rejected.first?["count"] as? Int == 2, "\(imported.out)")
        let example = try #require(rejected.first?["example"] as? String)
        #expect(example.contains("route_fast.gpx") && example.contains("its speed is not a finite 32-bit float"))

        let client = hkd.client()
        defer { client.close() }
        let stored = try await client.workouts(subject: "anna").workouts.map(\.workout).sorted { $0.start < $1.start }
        #expect(stored.count == 3)
        let routes = try await client.routes(of: stored[0].uuid, subject: "anna")
        #expect(routes.map(\.points.count).sorted() == [2, 20])
        for workout in stored.dropFirst() {
            #expect(try await client.routes(of: workout.uuid, subject: "anna").isEmpty)
        }
        // A second import stores nothing new and rejects the same routes again.
        let again = await Self.run(hkd.hkqServer + ["--subject", "anna", "import", export])
        #expect(again.status == 3, "\(again.err)")
        #expect(
            again.out.contains("3 workouts (0 new, 3 already stored); 2 routes (0 new, 2 already stored)"),
            "\(again.out)")
        await hkd.stop()
    }

    @Test("routes follow the workout grants: share without read sees its own; no workout grant is refused")
    func grants() async throws {
        let hkd = try await TestServer()
        let admin = hkd.client()
        defer { admin.close() }
        let start: Timestamp = 1_704_093_120_000_000
        func workoutWithRoute(_ source: String, day: Int64) -> (Workout, WorkoutRoute) {
            let begin = start + day * Micros.day
            let workout = Workout(
                activityType: .running, start: begin, end: begin + Micros.hour, source: SourceInfo(name: source))
            let route = WorkoutRoute(
                workout: workout.uuid, path: "/workout-routes/\(source).gpx",
                points: [RoutePoint(time: begin, latitude: 48.85, longitude: 2.29)])
            return (workout, route)
        }
        let (theirs, theirRoute) = workoutWithRoute("Watch", day: 0)
        _ = try await admin.insertWorkouts([theirs], subject: "anna")
        #expect(try await admin.insertRoutes([theirRoute], subject: "anna").inserted == 1)
        let created = try await admin.administer(
            .create(
                IdentitySpec(
                    name: "run-sync", subjects: ["anna"], grants: [TypeGrant(type: "workout", share: true, read: false)]
                )))
        let agent = hkd.client(token: created.token)
        defer { agent.close() }
        let (own, ownRoute) = workoutWithRoute("RunSync", day: 1)
        _ = try await agent.insertWorkouts([own], subject: "anna")
        #expect(try await agent.insertRoutes([ownRoute], subject: "anna").inserted == 1)
        #expect(try await agent.routes(of: own.uuid, subject: "anna") == [ownRoute])
        #expect(try await agent.routes(of: theirs.uuid, subject: "anna").isEmpty)
        #expect(try await admin.routes(of: theirs.uuid, subject: "anna") == [theirRoute])
        let reader = try await admin.administer(
            .create(
                IdentitySpec(
                    name: "steps", subjects: ["anna"], grants: [TypeGrant(type: "stepCount", share: true, read: true)]))
        )
        let other = hkd.client(token: reader.token)
        defer { other.close() }
        do {
            _ = try await other.insertRoutes([ownRoute], subject: "anna")
            Issue.record("an identity without a workout grant wrote a route")
        } catch {
            #expect(error.code.rawValue == ErrorCode.forbidden.rawValue)
        }
        await hkd.stop()
    }
}
