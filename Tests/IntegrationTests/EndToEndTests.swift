import Foundation
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// The real hkd, driven through the client library: insert, every query kind, several subjects and types.
@Suite("hkd end to end", .serialized)
struct EndToEndTests {
    static let t0 = StepSamples.t0
    static let watch = StepSamples.watch
    static let phone = SourceInfo(name: "iPhone", bundleIdentifier: "com.apple.health.phone")

    /// ``StepSamples/steps(subject:minutes:source:offset:)``.
    static func steps(subject: String, minutes: Int, source: SourceInfo = watch, offset: Int = 0) throws -> [Sample] {
        try StepSamples.steps(subject: subject, minutes: minutes, source: source, offset: offset)
    }

    @Test("insert, then sample and statistics queries answer exactly what was stored")
    func insertAndQuery() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        let welcome = try await client.connect()
        #expect(welcome.serverVersion.hasPrefix("hkd "))
        #expect(welcome.limits.maxBatchRows == 100_000)

        let acks = try await client.insert(try Self.steps(subject: "anna", minutes: 600), maxBatchRows: 250)
        #expect(acks.count == 3)
        #expect(acks.map(\.inserted).reduce(0, +) == 600)
        _ = try await client.insert(try Self.steps(subject: "ben", minutes: 60))
        let heart = try QuantityType.named("heartRate")
        let bpm = try HealthUnit(parsing: "count/min")
        _ = try await client.insert(
            (0..<30).map { i in
                Sample(
                    subject: "anna", type: heart, start: Self.t0 + Int64(i) * Micros.minute,
                    end: Self.t0 + Int64(i) * Micros.minute, value: Double(60 + i), unit: bpm, source: Self.watch)
            })

        // A sample query with every predicate flag; the boundary rules are the engine's, checked here end to end.
        let hour = SampleFilter(date: DatePredicate(start: Self.t0 + Micros.hour, end: Self.t0 + 2 * Micros.hour))
        #expect(try await client.samples("stepCount", subject: "anna", filter: hour).count == 61)  // ends at S match
        var strict = hour
        strict.date.strictStartDate = true
        #expect(try await client.samples("stepCount", subject: "anna", filter: strict).count == 60)
        strict.date.strictEndDate = true
        #expect(try await client.samples("stepCount", subject: "anna", filter: strict).count == 59)
        let newest = try await client.samples("stepCount", subject: "anna", sort: .startDescending, limit: 5)
        #expect(newest.map(\.start) == (595..<600).reversed().map { Self.t0 + Int64($0) * Micros.minute })
        let perSecond = try await client.samples("heartRate", subject: "anna", limit: 1, unit: "count/s")
        #expect(abs(perSecond[0].value - 1.0) < 1e-12)

        // Large results stream back in several frames and arrive whole.
        _ = try await client.insert(try Self.steps(subject: "carl", minutes: 120_000), maxBatchRows: 100_000)
        let all = try await client.sampleBatches("stepCount", subject: "carl")
        #expect(all.count >= 3)
        #expect(all.map(\.count).reduce(0, +) == 120_000)

        let sum = try #require(
            await client.statistics("stepCount", subject: "anna", options: [.cumulativeSum, .duration]))
        #expect(sum.statistics.figures.sum == Double((0..<600).map { $0 % 10 }.reduce(0, +)))
        #expect(sum.statistics.figures.duration == 600 * Micros.minute)
        #expect(sum.unit == "count")
        let heartStats = try #require(
            await client.statistics("heartRate", subject: "anna", options: [.discreteMin, .discreteMax, .mostRecent]))
        #expect(heartStats.statistics.figures.minimum == 60)
        #expect(heartStats.statistics.figures.maximum == 89)
        #expect(heartStats.statistics.figures.mostRecent?.value == 89)

        let info = try await client.serverInfo()
        #expect(info.subjects == 3)
        #expect(info.samplesPerType.first { $0.type == "stepCount" }?.samples == 600 + 60 + 120_000)
        #expect(info.samplesPerType.first { $0.type == "heartRate" }?.samples == 30)
        #expect(info.residentBytes > 0)
        #expect(await hkd.stop() == 0)
        #expect(hkd.logText.contains("stopping"))
    }

    @Test("invalid requests get their error code and message, and the connection stays usable")
    func invalidRequests() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        // No data is nil, from both forms, as HealthKit's statistics query answers: neither an error nor zero.
        #expect(try await client.statistics("stepCount", subject: "nobody", options: .cumulativeSum) == nil)
        let steps = try QuantityType.named("stepCount")
        #expect(try await client.statistics(steps, subject: "nobody", options: .cumulativeSum) == nil)
        let before = SampleFilter(date: DatePredicate(end: 1))
        #expect(
            try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum, filter: before) == nil)
        #expect(try await client.statistics(steps, subject: "anna", options: .cumulativeSum, filter: before) == nil)
        do {
            _ = try await client.statistics("heartRate", subject: "anna", options: .cumulativeSum)
            Issue.record("cumulativeSum on heartRate was accepted")
        } catch {
            #expect(error.origin == .server)
            #expect(error.code == .invalidOptions)
            #expect(error.message == "cumulativeSum is not valid for discrete type heartRate")
            #expect(!error.isRetryable)
        }
        do {
            _ = try await client.samples("stepcount", subject: "anna")
            Issue.record("unknown type accepted")
        } catch {
            #expect(error.code == .unknownQuantityType)
            #expect(error.message.contains("did you mean \"stepCount\""))
        }
        var wrongUnit = SampleBatch(
            batchID: HealthClient.makeBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "kg")
        wrongUnit.append(start: Self.t0, end: Self.t0 + Micros.minute, value: 3, source: Self.watch)
        do {
            _ = try await client.insert(wrongUnit)
            Issue.record("kg steps accepted")
        } catch {
            #expect(error.code == .incompatibleUnit)
            #expect(error.message == "unit \"kg\" is not compatible with stepCount (count)")
        }
        var negative = SampleBatch(
            batchID: HealthClient.makeBatchID(), subject: "anna", typeIdentifier: "stepCount", unit: "count")
        negative.append(start: Self.t0, end: Self.t0 + Micros.minute, value: -3, source: Self.watch)
        do {
            _ = try await client.insert(negative)
            Issue.record("negative steps accepted")
        } catch {
            #expect(error.code == .invalidSample)
        }
        // The same connection still works.
        try await client.ping()
        #expect(try await client.insert(try Self.steps(subject: "anna", minutes: 3)).first?.inserted == 3)
        await hkd.stop()
    }

    @Test("concurrent clients inserting and querying all get consistent answers")
    func concurrentClients() async throws {
        let hkd = try await TestServer()
        let clients = (0..<4).map { hkd.client(name: "writer-\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    for round in 0..<10 {
                        let samples = try Self.steps(
                            subject: "shared", minutes: 500, offset: (index * 10 + round) * 500)
                        let acks = try await client.insert(samples)
                        #expect(acks.first?.inserted == 500)
                        let count = try await client.sampleBatches("stepCount", subject: "shared").map(\.count).reduce(
                            0, +)
                        #expect(count >= (round + 1) * 500)
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = try #require(await clients[0].statistics("stepCount", subject: "shared", options: .duration))
        #expect(total.statistics.figures.duration == 4 * 10 * 500 * Micros.minute)
        for client in clients { client.close() }
        await hkd.stop()
    }

    @Test("many pipelined requests on one connection are all answered")
    func pipelining() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        _ = try await client.insert(try Self.steps(subject: "anna", minutes: 100))
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for limit in 1...200 {
                group.addTask { try await client.samples("stepCount", subject: "anna", limit: limit % 100 + 1).count }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(results.sorted() == (1...200).map { $0 % 100 + 1 }.sorted())
        client.close()
        await hkd.stop()
    }
}
