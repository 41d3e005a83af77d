import Foundation
import HKQKit
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Deletion through the protocol and `hkq delete`, surviving a clean stop and a kill -9.
@Suite("hkd delete", .serialized)
struct DeleteTests {
    @Test("delete by UUID (hkq) and by predicate (client) survive a clean restart and a SIGKILL")
    func deleteSurvivesRestarts() async throws {
        var hkd = try await TestServer()
        let samples = try EndToEndTests.steps(subject: "dora", minutes: 30)
        var client = hkd.client()
        _ = try await client.insert(samples)

        let (console, out, err) = Console.capturing()
        let arguments = [
            "delete", "stepCount", "--uuid", samples[0].uuid.uuidString, "--server", "127.0.0.1:\(hkd.port)", "--token",
            hkd.token,
            "--subject", "dora",
        ]
        #expect(await hkqMain(arguments: arguments, environment: [:], console: console) == 0, "\(err.text)")
        #expect(out.text == "deleted 1 sample\n")
        let (usage, _, _) = Console.capturing()
        #expect(
            await hkqMain(
                arguments: ["delete", "stepCount", "--server", "127.0.0.1:\(hkd.port)", "--token", hkd.token],
                environment: [:],
                console: usage) == 64)

        client.close()
        await hkd.stop()
        hkd = try await hkd.restart()
        client = hkd.client()
        #expect(try await client.samples("stepCount", subject: "dora").count == 29)
        let range = SampleFilter(
            date: DatePredicate(
                start: EndToEndTests.t0 + 10 * Micros.minute, end: EndToEndTests.t0 + 20 * Micros.minute,
                strictStartDate: true))
        #expect(try await client.delete("stepCount", subject: "dora", .filter(range)) == 10)
        #expect(try await client.delete("stepCount", subject: "dora", .filter(range)) == 0)
        client.close()
        await hkd.kill()
        hkd = try await hkd.restart()
        client = hkd.client()
        defer { client.close() }
        let left = try await client.samples("stepCount", subject: "dora")
        #expect(left.count == 19)
        #expect(!left.contains { $0.uuid == samples[0].uuid })
        // A retried insert of the original samples brings back only what was deleted, and duplicates nothing.
        let acks = try await client.insert(samples)
        #expect(acks.map(\.inserted).reduce(0, +) == 11)
        #expect(acks.map(\.duplicates).reduce(0, +) == 19)
        #expect(try await client.samples("stepCount", subject: "dora").count == 30)
        await hkd.stop()
    }
}
