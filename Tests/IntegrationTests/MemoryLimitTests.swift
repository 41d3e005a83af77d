import Foundation
import HealthClient
import HealthModel
import HealthPosix
import HealthWire
import HKQKit
import TestSupport
import Testing

/// `hkd --memory-limit`: the real server moves sealed blocks beyond the limit to segment files in `DIR/cold`,
/// answers exactly the same from them, reports them in server info, and starts again from its snapshot.
@Suite("hkd --memory-limit")
struct MemoryLimitTests {
    static let source = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch")
    static let subjects = ["anna", "ben", "carla"]

    /// `rows` minutes of random step counts (random values: blocks of a few bytes a row, not a few bits).
    static func batch(
        id: UInt64, subject: String, first: Int, rows: Int, random: inout SplitMix64
    ) -> (SampleBatch, sum: Double) {
        var batch = SampleBatch(batchID: id, subject: subject, typeIdentifier: "stepCount", unit: "count")
        var sum = 0.0
        for minute in first..<first + rows {
            let start = Int64(minute) * Micros.minute
            let value = Double(random.next() % 5_000)
            sum += value
            batch.append(start: start, end: start + Micros.minute, value: value, source: source)
        }
        return (batch, sum)
    }

    /// Each subject's sample count and step sum, as the server answers them.
    static func answers(_ client: HealthClient) async throws -> [String] {
        var answers: [String] = []
        for subject in subjects {
            let samples = try await client.samples("stepCount", subject: subject)
            let sum = try await client.statistics("stepCount", subject: subject, options: .cumulativeSum)
            answers.append("\(subject) \(samples.count) \(sum?.statistics.figures.sum ?? -1)")
        }
        return answers
    }

    @Test("Blocks beyond the limit go to DIR/cold and answer the same; server info shows them; a restart keeps all")
    func coldBlocksServe() async throws {
        let limit = 64 << 10
        let server = try await TestServer(arguments: ["--auth", "off", "--memory-limit", "64K"])
        let client = HealthClient(ClientConfiguration(host: "127.0.0.1", port: server.port, token: ""))
        var expected: [String] = []
        var random = SplitMix64(seed: TestSeed.value(51))
        for (n, subject) in Self.subjects.enumerated() {
            var sum = 0.0
            for part in 0..<3 {
                let (batch, batchSum) = Self.batch(
                    id: UInt64(n * 10 + part), subject: subject, first: part * 20_000, rows: 20_000, random: &random)
                #expect(try await client.insert(batch).inserted == 20_000)
                sum += batchSum
            }
            expected.append("\(subject) 60000 \(sum)")
        }
        var info = try await client.serverInfo()
        try await waitUntil(timeout: .seconds(30), "hkd to move blocks out of memory") {
            info = try await client.serverInfo()
            return info.blockBytesOnDisk > 0 && info.blockBytesInMemory <= UInt64(limit)
        }
        #expect(try FileSystem.contentsOfDirectory(server.dataDirectory + "/cold").contains { $0.hasSuffix(".seg") })
        #expect(try await Self.answers(client) == expected)
        let table = ServerInfoCommand.rendered(info, format: .table)
        #expect(table.contains("BLOCKS ON DISK    \(HumanFormat.bytes(info.blockBytesOnDisk))"), "\(table)")
        client.close()

        #expect(await server.stop() == 0)
        let again = try await server.restart()
        let reader = HealthClient(ClientConfiguration(host: "127.0.0.1", port: again.port, token: ""))
        defer { reader.close() }
        #expect(try await Self.answers(reader) == expected)
        try await waitUntil(timeout: .seconds(30), "the restarted hkd to move blocks out of memory again") {
            let info = try await reader.serverInfo()
            return info.blockBytesOnDisk > 0 && info.blockBytesInMemory <= UInt64(limit)
        }
        #expect(try await Self.answers(reader) == expected)
        _ = await again.stop()
    }
}
