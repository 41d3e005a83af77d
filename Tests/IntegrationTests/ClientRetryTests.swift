import Foundation
import HealthClient
import Synchronization
import TestSupport
import Testing

/// Client calls outlast a restart of hkd: each retries retryable failures within its budget (ClientConfiguration
/// `retry`), permanent ones fail at once, and SampleUploader keeps rows until they are acknowledged.
@Suite("client calls across a restart of hkd", .serialized)
struct ClientRetryTests {
    /// The retries one client made, as its retry observer saw them.
    final class Retries: Sendable {
        private let events = Mutex<[RetryEvent]>([])

        func record(_ event: RetryEvent) { events.withLock { $0.append(event) } }
        var count: Int { events.withLock { $0.count } }
        var all: [RetryEvent] { events.withLock { $0 } }
        /// The pauses so far, together.
        var waited: Duration { events.withLock { $0.reduce(.zero) { $0 + $1.pause } } }
    }

    /// A client of 127.0.0.1:`port` that tells `retries` about each retry.
    static func client(port: Int, token: String, retry: RetryPolicy = .standard, retries: Retries) -> HealthClient {
        HealthClient(
            ClientConfiguration(port: port, token: token, requestTimeout: .seconds(30), retry: retry),
            onRetry: retries.record)
    }

    /// `count` minutes of anna's steps from 2024-03-10 00:00 UTC on, `first` minutes in, with content UUIDs.
    static func steps(_ count: Int, first: Int = 0, value: Double = 10) throws -> [Sample] {
        let type = try QuantityType.named("stepCount")
        let unit = try HealthUnit(parsing: "count")
        return try (first..<first + count).map { minute in
            let start = 1_710_028_800 * Micros.second + Int64(minute) * Micros.minute
            return try Sample(
                uuid: UUID(), subject: "anna", type: type, start: start, end: start + Micros.minute, value: value,
                unit: unit, source: SourceInfo(name: "Watch")
            ).withStableID()
        }
    }

    /// A stopped hkd (its port refuses connections), its port, its admin token, and how to start it again there.
    static func stoppedServer() async throws -> TestServer {
        let hkd = try await TestServer()
        #expect(await hkd.stop() == 0)
        return hkd
    }

    @Test("insert, a query and connect, started while hkd is down, succeed once it starts on the same port")
    func callsOutlastARestart() async throws {
        let first = try await Self.stoppedServer()
        let (inserterRetries, querierRetries, connectorRetries) = (Retries(), Retries(), Retries())
        let inserter = Self.client(port: first.port, token: first.token, retries: inserterRetries)
        let querier = Self.client(port: first.port, token: first.token, retries: querierRetries)
        let connector = Self.client(port: first.port, token: first.token, retries: connectorRetries)
        defer { [inserter, querier, connector].forEach { $0.close() } }
        let samples = try Self.steps(5)
        // insert([Sample]) learns the batch limit by connecting: that connect is retried too.
        async let acks = inserter.insert(samples)
        async let info = querier.serverInfo()
        async let welcome = connector.connect()
        // Each call has waited longer than the 1.55 s a call once retried for: hkd's restart takes longer.
        try await waitUntil("every call to have waited 2 s for the refusing port") {
            [inserterRetries, querierRetries, connectorRetries].allSatisfy { $0.waited >= .seconds(2) }
        }
        let second = try await first.restart(samePort: true)
        #expect(try await acks.map(\.inserted).reduce(0, +) == 5)
        #expect(try await info.serverVersion.isEmpty == false)
        #expect(try await welcome.limits.maxBatchRows > 0)
        #expect(inserterRetries.all.allSatisfy { $0.error.code == .connectionLost && $0.budget == .seconds(30) })
        let stored = try await querier.samples("stepCount", subject: "anna")
        #expect(Set(stored.map(\.uuid)) == Set(samples.map(\.uuid)))
        await second.stop()
    }

    @Test("permanent errors fail at once, without a retry, whatever the budget")
    func permanentErrorsFailAtOnce() async throws {
        let hkd = try await TestServer()
        let retries = Retries()
        var wrong = hkd.token
        let last = wrong.removeLast()
        wrong.append(last == "0" ? "1" : "0")
        let wrongToken = Self.client(port: hkd.port, token: wrong, retries: retries)
        defer { wrongToken.close() }
        let started = ContinuousClock.now
        do throws(HealthClientError) {
            _ = try await wrongToken.serverInfo()
            Issue.record("a wrong token was accepted")
        } catch {
            #expect(error.code == .unauthenticated && error.origin == .server, "\(error)")
        }
        let admin = Self.client(port: hkd.port, token: hkd.token, retries: retries)
        defer { admin.close() }
        let negative = try Self.steps(1, value: -5)
        do throws(HealthClientError) {
            _ = try await admin.insert(negative)
            Issue.record("a negative step count was stored")
        } catch {
            #expect(error.code == .invalidSample, "\(error)")
        }
        #expect(retries.count == 0)
        #expect(ContinuousClock.now - started < .seconds(10), "well under the 30 s budget")
        await hkd.stop()
    }

    @Test("a call gives up when its budget is spent, with the last retryable error")
    func budgetIsHonoured() async throws {
        let hkd = try await Self.stoppedServer()
        let retries = Retries()
        let budget = Duration.milliseconds(800)
        let client = Self.client(
            port: hkd.port, token: hkd.token, retry: RetryPolicy(budget: budget, seed: 11), retries: retries)
        defer { client.close() }
        let sample = try Self.steps(1)
        let started = ContinuousClock.now
        do throws(HealthClientError) {
            _ = try await client.insert(sample)
            Issue.record("an insert into a stopped server succeeded")
        } catch {
            #expect(error.code == .connectionLost, "\(error)")
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= budget, "gave up after \(elapsed)")
        #expect(elapsed < budget + .seconds(5), "gave up after \(elapsed)")
        // How many retries fit depends on how long each refused attempt takes on a loaded machine; at least one.
        #expect(retries.count >= 1 && retries.all.map(\.retry) == Array(1...retries.count))
    }

    @Test("SampleUploader keeps rows while hkd is away, holding add back, and reports only permanent rejections")
    func uploaderKeepsRowsUntilAcknowledged() async throws {
        let first = try await Self.stoppedServer()
        let retries = Retries()
        // A short budget: the uploader itself must keep the rows once the client gives up.
        let client = Self.client(
            port: first.port, token: first.token, retry: RetryPolicy(budget: .milliseconds(300), seed: 5),
            retries: retries)
        defer { client.close() }
        let uploader = SampleUploader(client: client, maxRows: 10, maxDelay: .seconds(60), maxInFlight: 1)
        let outcomes = Task {
            var collected: [UploadOutcome] = []
            for await outcome in uploader.outcomes { collected.append(outcome) }
            return collected
        }
        let good = try Self.steps(30)
        let bad = try Self.steps(10, first: 100, value: -1)
        // The first full batch goes out; the second waits for it (one in flight), holding this task back.
        let adding = Task {
            await uploader.add(contentsOf: good + bad)
            return ContinuousClock.now
        }
        // Several budgets spent on the refusing port: the client gave up on the batch more than once.
        try await waitUntil("the client to have retried through a few budgets") { retries.count >= 12 }
        let restarted = ContinuousClock.now
        let second = try await first.restart(samePort: true)
        let addedAt = await adding.value
        #expect(addedAt > restarted, "add waited while the server was away")
        await uploader.finish()
        let all = await outcomes.value
        var acknowledged = 0
        var rejected: [HealthClientError] = []
        for outcome in all {
            switch outcome {
            case .acknowledged(let ack): acknowledged += Int(ack.inserted)
            case .rejected(_, let rows, let error):
                #expect(rows == 10)
                rejected.append(error)
            }
        }
        #expect(acknowledged == 30)
        #expect(rejected.map(\.code) == [.invalidSample], "\(rejected)")
        let reader = second.client()
        defer { reader.close() }
        let stored = try await reader.samples("stepCount", subject: "anna")
        #expect(Set(stored.map(\.uuid)) == Set(good.map(\.uuid)))
        await second.stop()
    }
}
