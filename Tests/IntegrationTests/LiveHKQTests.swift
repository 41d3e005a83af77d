import Foundation
import HKQKit
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// `hkq changes` and `hkq watch` against the real hkd.
@Suite("hkq changes and watch", .serialized)
struct LiveHKQTests {
    private func run(_ arguments: [String], output: CapturedText = CapturedText()) async -> (
        status: Int32, out: String, err: String
    ) {
        let err = CapturedText()
        let status = await HKQ.standard.run(
            arguments: arguments, environment: [:], console: Console(out: output, err: err))
        return (status, output.text, err.text)
    }

    /// Waits until `output` holds `lines` lines: the watch has printed what it had.
    private func waitForLines(_ output: CapturedText, _ lines: Int) async throws {
        try await waitUntil("hkq watch to print \(lines) lines: \(output.text)") {
            output.text.split(separator: "\n").count >= lines
        }
    }

    @Test("hkq changes pages with --anchor and --limit; a deletion shows up with its UUID")
    func changes() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        let batch = LiveUpdateTests.batch(LiveUpdateTests.day0, count: 5)
        _ = try await client.insert(batch)
        let server = hkd.hkqServer + ["--subject", "anna", "--tz", "UTC"]
        let first = await run(["changes", "stepCount", "--limit", "3"] + server)
        #expect(first.status == 0, "\(first.err)")
        #expect(first.out.components(separatedBy: "added").count - 1 == 3)
        let anchorLine = first.out.split(separator: "\n").last { $0.hasPrefix("anchor ") }
        #expect(anchorLine?.hasSuffix("(more)") == true)
        let anchor = anchorLine.map { String($0.split(separator: " ")[1]) } ?? "?"
        _ = try await client.delete("stepCount", subject: "anna", .uuids([batch.uuid(row: 0)]))
        let second = await run(["changes", "stepCount", "--anchor", anchor, "--format", "csv"] + server)
        #expect(second.status == 0, "\(second.err)")
        #expect(second.out.components(separatedBy: "added").count - 1 == 2)
        #expect(second.out.contains("deleted"))
        #expect(second.out.contains(batch.uuid(row: 0).uuidString))
        let bad = await run(["changes", "stepCount", "--anchor", "999999"] + server)
        #expect(bad.status == 65, "an expired anchor is input the server refuses")
        #expect(bad.err.contains("resync from 0"))
        await hkd.stop()
    }

    @Test("hkq watch prints one line per change, and with --collection the buckets a change touched")
    func watch() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        _ = try await client.insert(LiveUpdateTests.batch(LiveUpdateTests.day0, count: 2))
        let server = hkd.hkqServer + ["--subject", "anna", "--tz", "America/New_York"]
        let linesOut = CapturedText()
        let bucketsOut = CapturedText()
        async let lines = run(["watch", "stepCount", "--count", "4"] + server, output: linesOut)
        async let buckets = run(["watch", "stepCount", "--collection", "--count", "2"] + server, output: bucketsOut)
        // Both have subscribed once they print what was there: two samples and an anchor line, one bucket.
        try await waitForLines(linesOut, 3)
        try await waitForLines(bucketsOut, 1)
        _ = try await client.insert(LiveUpdateTests.batch(LiveUpdateTests.day0 + 3 * Micros.day, count: 2))
        let watched = await lines
        #expect(watched.status == 0, "\(watched.err)")
        #expect(watched.out.split(separator: "\n").filter { $0.hasPrefix("+ ") }.count == 4)
        let collection = await buckets
        #expect(collection.status == 0, "\(collection.err)")
        #expect(collection.out.split(separator: "\n") == ["2024-03-09 21 count", "2024-03-12 21 count"])
        await hkd.stop()
    }
}
