import Foundation
import TestSupport
import Testing

/// The dashboard hkd serves at `/` of its HTTP listener: its static files and their headers, then the page in a
/// real browser (Tests/Browser/dashboard_test.py: Debian's chromium and chromium-driver with selenium from PyPI,
/// which `.ci/run` installs; like promtool and nats-server for their tests, a missing one fails the test) against
/// an hkd that imported a month of steps, heart rate, sleep, workouts with routes and body measurements ending
/// now. Screenshots of each view go to `.build/test-artifacts/dashboard/`.
@Suite("Dashboard", .serialized)
struct DashboardTests {
    /// hkd with `arguments`, and its HTTP port.
    static func server(_ arguments: [String] = []) async throws -> (TestServer, Int) {
        let hkd = try await TestServer(arguments: ["--http-listen", "127.0.0.1:0"] + arguments)
        let log = hkd.logText
        let marker = try #require(log.range(of: "HTTP API on 127.0.0.1:"))
        return (hkd, try #require(Int(log[marker.upperBound...].prefix { $0.isNumber })))
    }

    static func get(_ target: String, port: Int, method: String = "GET") throws -> HTTPAPITests.Response {
        let request = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n"
        return try #require(try HTTPAPITests.exchange([request], port: port).first)
    }

    @Test("/ and /ui/… serve the page's files without a token, same-origin only; others are refused")
    func staticFiles() async throws {
        let (hkd, port) = try await Self.server(["--chartjs", "/nonexistent/chart.js"])
        let page = try Self.get("/", port: port)
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.body.contains("<script src=\"/ui/dashboard.js\" defer></script>"))
        let policy = try #require(page.headers["content-security-policy"])
        #expect(policy.contains("default-src 'none'") && policy.contains("connect-src 'self'"), "\(policy)")
        #expect(page.headers["x-content-type-options"] == "nosniff")
        #expect(page.headers["set-cookie"] == nil)
        let script = try Self.get("/ui/api.js", port: port)
        #expect(script.status == 200 && script.headers["content-type"] == "text/javascript; charset=utf-8")
        #expect(script.body.contains("sessionStorage"))
        let missingChart = try Self.get("/ui/chart.js", port: port)
        #expect(missingChart.status == 404)
        #expect(missingChart.body.contains("libjs-chart.js"), "\(missingChart.body)")
        #expect(try Self.get("/ui/../admin.token", port: port).status == 404)
        #expect(try Self.get("/ui/nothing.js", port: port).status == 404)
        let post = try Self.get("/", port: port, method: "POST")
        #expect(post.status == 405 && post.headers["allow"] == "GET, HEAD")
        let head = try Self.get("/ui/dashboard.css", port: port, method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(try Self.get("/v1/types", port: port).status == 401, "/v1 still needs the token")
        await hkd.stop()
    }

    @Test("--dashboard-dir serves the files from a directory, --chartjs Chart.js from its path")
    func directories() async throws {
        let scratch = try TestDirectory(prefix: "hk-dashboard")
        try "<p>changed</p>".write(toFile: scratch.appending("index.html"), atomically: true, encoding: .utf8)
        try "window.Chart = 1;".write(toFile: scratch.appending("chart.min.js"), atomically: true, encoding: .utf8)
        let (hkd, port) = try await Self.server([
            "--dashboard-dir", scratch.path, "--chartjs", scratch.appending("chart.min.js"),
        ])
        #expect(try Self.get("/", port: port).body == "<p>changed</p>")
        #expect(try Self.get("/ui/chart.js", port: port).body == "window.Chart = 1;")
        let missing = try Self.get("/ui/api.js", port: port)
        #expect(missing.status == 404 && missing.body.contains("--dashboard-dir"), "\(missing.body)")
        await hkd.stop()
    }

    @Test("in Chromium: the API's daily totals, live after an insert, every view, no other host asked")
    func inBrowser() async throws {
        let (hkd, port) = try await Self.server()
        let (bare, barePort) = try await Self.server(["--chartjs", "/nonexistent/chart.js"])
        let zone = "America/New_York"
        let scratch = try TestDirectory(prefix: "hk-dashboard")
        let export = scratch.appending("export.xml")
        let seed = TestSeed.value(35)
        try DashboardExport.document(endingAt: Date(), zone: zone, seed: seed).write(
            toFile: export, atomically: true, encoding: .utf8)
        let anna = HKQBinaryTests.anna(at: hkd)
        let imported = try await HKQBinaryTests.hkq(anna + ["import", export])
        #expect(imported.status == 0, "\(imported.out)\(imported.err)")
        let artifacts = TestServer.packageRoot.appendingPathComponent(".build/test-artifacts/dashboard").path
        let script = TestServer.packageRoot.appendingPathComponent("Tests/Browser/dashboard_test.py").path
        let arguments = [
            "python3", script, "--url", "http://127.0.0.1:\(port)", "--token", hkd.token, "--subject", "anna",
            "--tz", zone, "--out", artifacts, "--no-charts-url", "http://127.0.0.1:\(barePort)",
            "--no-charts-token", bare.token,
        ]
        let outcome = try await runChild("/usr/bin/env", arguments)
        #expect(outcome.status == 0, "seed \(seed): \(outcome.output)\(outcome.errors)")
        let report = try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any]
        #expect((report?["failures"] as? [String])?.isEmpty == true, "\(outcome.output)")
        #expect((report?["passed"] as? Int ?? 0) > 40, "\(outcome.output)")
        for view in ["activity", "heart", "sleep", "workouts", "body", "explore", "activity-dark", "phone"] {
            #expect(FileManager.default.fileExists(atPath: artifacts + "/\(view).png"), "\(view).png")
        }
        await bare.stop()
        await hkd.stop()
    }
}

/// An Apple Health export.xml of one person's last weeks up to `end`, written as the Health app writes one: steps
/// from a phone and a watch that overlap, distance and active energy, heart rate every 20 minutes and resting heart
/// rate, nights of sleep stages, runs with inline routes (one synced twice: a likely duplicate), weight, body fat
/// and blood pressure correlations. Nothing starts in the last 15 minutes, so an insert there adds exactly its
/// value. Seeded: the same seed and end give the same bytes.
enum DashboardExport {
    static let phone = "Anna’s iPhone"
    static let watch = "Anna’s Apple Watch"

    static func document(endingAt end: Date, zone: String, seed: UInt64) -> String {
        var random = SplitMix64(seed: seed)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: zone)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        let latest = end.addingTimeInterval(-15 * 60)
        let today = calendar.startOfDay(for: end)
        func time(_ date: Date) -> String { formatter.string(from: date) }
        func at(_ day: Int, _ hour: Int, _ minute: Int) -> Date {
            let midnight = calendar.date(byAdding: .day, value: -day, to: today)!
            return calendar.date(bySettingHour: hour, minute: minute, second: 0, of: midnight)!
        }
        func record(_ type: String, _ source: String, _ unit: String, _ start: Date, _ stop: Date, _ value: String)
            -> String
        {
            let unitAttribute = unit.isEmpty ? "" : " unit=\"\(unit)\""
            return
                " <Record type=\"\(type)\" sourceName=\"\(source)\" sourceVersion=\"17.0\"\(unitAttribute) creationDate=\"\(time(stop))\" startDate=\"\(time(start))\" endDate=\"\(time(stop))\" value=\"\(value)\"/>"
        }
        var lines: [String] = []
        // Steps, distance and energy: the phone first (so it ranks first), then the watch over part of the same time.
        for day in 0..<30 {
            for hour in stride(from: 7, through: 21, by: 2) {
                let start = at(day, hour, Int(random.next() % 30))
                let stop = start.addingTimeInterval(Double(10 + random.next() % 30) * 60)
                guard stop <= latest else { continue }
                let steps = 200 + Int(random.next() % 1800)
                lines.append(record("HKQuantityTypeIdentifierStepCount", phone, "count", start, stop, "\(steps)"))
                let overlap = start.addingTimeInterval(300)
                let watchSteps = steps / 2 + Int(random.next() % 400)
                lines.append(
                    record("HKQuantityTypeIdentifierStepCount", watch, "count", overlap, stop, "\(watchSteps)"))
                let km = Double(steps) * 0.00075
                lines.append(
                    record(
                        "HKQuantityTypeIdentifierDistanceWalkingRunning", phone, "km", start, stop,
                        String(format: "%.3f", km)))
                lines.append(
                    record(
                        "HKQuantityTypeIdentifierActiveEnergyBurned", watch, "kcal", start, stop,
                        String(format: "%.1f", Double(steps) * 0.045)))
            }
        }
        // Heart rate every 20 minutes for a week, resting heart rate each morning for a month.
        for day in 0..<7 {
            for minute in stride(from: 0, to: 24 * 60, by: 20) {
                let instant = at(day, minute / 60, minute % 60)
                guard instant <= latest else { continue }
                let awake = (7 * 60..<23 * 60).contains(minute)
                let bpm = (awake ? 68 : 54) + Int(random.next() % (awake ? 40 : 12))
                lines.append(
                    record("HKQuantityTypeIdentifierHeartRate", watch, "count/min", instant, instant, "\(bpm)"))
            }
        }
        for day in 0..<30 {
            let morning = at(day, 7, 0)
            guard morning <= latest else { continue }
            lines.append(
                record(
                    "HKQuantityTypeIdentifierRestingHeartRate", watch, "count/min", morning, morning,
                    "\(52 + random.next() % 8)"))
        }
        // Nights: in bed from about 22:30, stages through the night, up about 06:40.
        for day in 1..<21 {
            var start = at(day, 22, 20 + Int(random.next() % 25))
            let bedtime = start
            var stages: [(String, Double)] = [("AsleepCore", 40)]
            for _ in 0..<4 {
                stages += [("AsleepDeep", Double(30 + random.next() % 30)), ("AsleepCore", 50), ("AsleepREM", 25)]
                if random.next() % 3 == 0 { stages.append(("Awake", 5)) }
            }
            for (stage, minutes) in stages {
                let stop = start.addingTimeInterval(minutes * 60)
                lines.append(
                    record(
                        "HKCategoryTypeIdentifierSleepAnalysis", watch, "", start, stop,
                        "HKCategoryValueSleepAnalysis\(stage)"))
                start = stop
            }
            lines.append(
                record(
                    "HKCategoryTypeIdentifierSleepAnalysis", phone, "", bedtime.addingTimeInterval(-600),
                    start.addingTimeInterval(600), "HKCategoryValueSleepAnalysisInBed"))
        }
        // Weight and body fat weekly, blood pressure twice a week, for four months.
        for week in 0..<17 {
            let morning = at(week * 7 + 1, 7, 30)
            lines.append(
                record(
                    "HKQuantityTypeIdentifierBodyMass", phone, "kg", morning, morning,
                    String(format: "%.1f", 64.0 + Double(random.next() % 30) / 10)))
            lines.append(
                record(
                    "HKQuantityTypeIdentifierBodyFatPercentage", phone, "%", morning, morning,
                    String(format: "%.3f", 0.22 + Double(random.next() % 20) / 1000)))
            for offset in [2, 5] {
                let reading = at(week * 7 + offset, 8, 0)
                let systolic = 112 + random.next() % 18
                let diastolic = 70 + random.next() % 12
                let members = [
                    record(
                        "HKQuantityTypeIdentifierBloodPressureSystolic", "Cuff", "mmHg", reading, reading, "\(systolic)"
                    ),
                    record(
                        "HKQuantityTypeIdentifierBloodPressureDiastolic", "Cuff", "mmHg", reading, reading,
                        "\(diastolic)"),
                ]
                // As the Health app writes it: the members inside the correlation, and again as records of their own.
                lines.append(
                    """
                     <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" sourceVersion="2.1" creationDate="\(time(reading))" startDate="\(time(reading))" endDate="\(time(reading))">
                    \(members.joined(separator: "\n"))
                     </Correlation>
                    """)
                lines += members
            }
        }
        // Runs with routes two and five days ago, heart rate during them; the first synced twice.
        for (index, day) in [5, 2].enumerated() {
            let start = at(day, 18, 0)
            let stop = start.addingTimeInterval(32 * 60)
            for minute in stride(from: 1, to: 32, by: 2) {
                let instant = start.addingTimeInterval(Double(minute) * 60)
                lines.append(
                    record(
                        "HKQuantityTypeIdentifierHeartRate", watch, "count/min", instant, instant,
                        "\(130 + random.next() % 40)"))
            }
            var locations: [String] = []
            for point in 0..<64 {
                let angle = Double(point) / 64 * 2 * Double.pi
                let latitude = 40.7812 + 0.006 * sin(angle) + 0.002 * sin(3 * angle + Double(index))
                let longitude = -73.9665 + 0.008 * cos(angle)
                let instant = start.addingTimeInterval(Double(point) * 30)
                locations.append(
                    String(
                        format:
                            "   <Location date=\"%@\" latitude=\"%.6f\" longitude=\"%.6f\" altitude=\"%d\" horizontalAccuracy=\"3\" verticalAccuracy=\"2\" course=\"0\" speed=\"3.1\"/>",
                        time(instant), latitude, longitude, 20 + point % 7))
            }
            for copy in 0..<(index == 0 ? 2 : 1) {
                // A second copy differs only in when it was written: the same run synced again.
                let creation = time(stop.addingTimeInterval(Double(copy) * 300))
                let route =
                    copy == 0
                    ? """
                      <WorkoutRoute sourceName="\(watch)" sourceVersion="17.0" creationDate="\(time(stop))" startDate="\(time(start))" endDate="\(time(stop))">
                    \(locations.joined(separator: "\n"))
                      </WorkoutRoute>
                    """ : ""
                lines.append(
                    """
                     <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="32" durationUnit="min" totalDistance="5.\(index + 1)" totalDistanceUnit="km" totalEnergyBurned="\(330 + index * 12)" totalEnergyBurnedUnit="kcal" sourceName="\(watch)" sourceVersion="17.0" creationDate="\(creation)" startDate="\(time(start))" endDate="\(time(stop))">
                    \(route)
                     </Workout>
                    """)
            }
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE HealthData [
            <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary)*)>
            ]>
            <HealthData locale="en_US">
             <ExportDate value="\(time(end))"/>
             <Me HKCharacteristicTypeIdentifierDateOfBirth="1984-05-01" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"/>
            \(lines.joined(separator: "\n"))
            </HealthData>

            """
    }
}
