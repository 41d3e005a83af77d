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
    private func run(_ arguments: [String]) async -> (status: Int32, out: String, err: String) {
        let (console, out, err) = Console.capturing()
        let status = await HKQ.standard.run(arguments: arguments, environment: [:], console: console)
        return (status, out.text, err.text)
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
        #expect(bad.status == 1)
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
        let (linesConsole, linesOut, linesErr) = Console.capturing()
        let (bucketsConsole, bucketsOut, bucketsErr) = Console.capturing()
        async let lines = HKQ.standard.run(
            arguments: ["watch", "stepCount", "--count", "4"] + server, environment: [:], console: linesConsole)
        async let buckets = HKQ.standard.run(
            arguments: ["watch", "stepCount", "--collection", "--count", "2"] + server, environment: [:],
            console: bucketsConsole)
        // Each watch prints what is stored once its subscription is in place: only then may the insert come.
        try await waitUntil("hkq watch to print the 2 stored samples: \(linesOut.text)\(linesErr.text)") {
            linesOut.text.split(separator: "\n").filter { $0.hasPrefix("+ ") }.count >= 2
        }
        try await waitUntil("hkq watch --collection to print the stored bucket: \(bucketsErr.text)") {
            bucketsOut.text.contains("\n")
        }
        _ = try await client.insert(LiveUpdateTests.batch(LiveUpdateTests.day0 + 3 * Micros.day, count: 2))
        let watchedStatus = await lines
        #expect(watchedStatus == 0, "\(linesErr.text)")
        #expect(linesOut.text.split(separator: "\n").filter { $0.hasPrefix("+ ") }.count == 4)
        let collectionStatus = await buckets
        #expect(collectionStatus == 0, "\(bucketsErr.text)")
        #expect(bucketsOut.text.split(separator: "\n") == ["2024-03-09 21 count", "2024-03-12 21 count"])
        await hkd.stop()
    }
}
