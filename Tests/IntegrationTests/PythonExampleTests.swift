import Foundation
import TestSupport
import Testing

/// Examples/python/daily_steps.py (the standard library and pandas; `.ci/run` installs pandas) against the real
/// hkd's HTTP API: the days and totals hkq's collection gives.
@Suite("Python example")
struct PythonExampleTests {
    @Test("daily_steps.py reads a daily collection into a DataFrame with hkq's days and merged sums")
    func dailySteps() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        let anna = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(anna + ["insert", "-"], input: HTTPAPITests.walk).status == 0)
        let hkq = try await HKQBinaryTests.hkq(
            anna + ["--format", "json", "collection", "stepCount", "--interval", "1d", "--tz", "America/New_York"])
        let buckets = try #require(
            try JSONSerialization.jsonObject(with: Data(hkq.out.utf8)) as? [[String: Any]])
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/python/daily_steps.py").path
        let outcome = try await runChild(
            "/usr/bin/env",
            [
                "python3", script, "--url", "http://127.0.0.1:\(port)", "--token-file",
                hkd.dataDirectory + "/admin.token", "--subject", "anna", "--tz", "America/New_York",
            ])
        #expect(outcome.status == 0, "\(outcome.errors)")
        let lines = outcome.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "start,end,sum,unit", "\(outcome.output)")
        #expect(lines.count == buckets.count + 1)
        for (line, bucket) in zip(lines.dropFirst(), buckets) {
            let day = try #require(bucket["start"] as? String).prefix(10)
            let sum = try #require(bucket["sum"] as? NSNumber)
            #expect(line.hasPrefix(day + " 00:00:00-05:00,"), "\(line)")
            #expect(line.contains(",\(sum),count"), "\(line) vs \(sum)")
        }
        await hkd.stop()
    }
}
