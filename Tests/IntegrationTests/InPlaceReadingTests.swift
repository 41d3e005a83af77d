import HealthClient
import HealthModel
import HealthPosix
import HealthWire
import Synchronization
import TestSupport
import Testing

/// A client connected in place (`HealthClient.connectInPlace`, as hkq connects) reads the replies to its own
/// thread's requests on that thread, and starts the reader thread only when something else needs replies read:
/// a request from another thread, a subscription. Run against the real hkd.
@Suite("a connection opened in place reads replies on its own thread", .serialized)
struct InPlaceReadingTests {
    static let phone = SourceInfo(name: "iPhone", bundleIdentifier: "com.apple.health.phone")
    /// 2024-03-09T05:00Z.
    static let day0: Timestamp = 1_709_960_400_000_000

    /// Runs `body` as a task on a thread of its own (a ``ThreadExecutor``), as hkq runs its command.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let executor = ThreadExecutor()
        let thread = try PosixThread.spawn(name: "hk-test-task") { executor.run() }
        let task = Task(executorPreference: executor) {
            defer { executor.stop() }
            return try await body()
        }
        let result = await task.result
        thread.join()
        return try result.get()
    }

    /// Connects `client` in place on a thread of its own (as hkq does) and runs `body` there with the connection.
    static func connectedInPlace(
        _ client: HealthClient, _ body: @escaping @Sendable (HealthConnection) async throws -> Void
    ) async throws {
        try await onOwnThread {
            _ = try client.connectInPlace()
            try await body(try await client.connection())
        }
    }

    /// `count` step samples of one minute each, 10…16 steps, every five minutes from `start`.
    static func steps(_ start: Timestamp, count: Int) throws -> [Sample] {
        let type = try QuantityType.named("stepCount")
        let unit = try HealthUnit(parsing: "count")
        return (0..<Int64(count)).map { i in
            let sampleStart = start + i * 5 * Micros.minute
            return Sample(
                subject: "anna", type: type, start: sampleStart, end: sampleStart + Micros.minute,
                value: Double(10 + i % 7), unit: unit, source: phone)
        }
    }

    /// The sum of ``steps(_:count:)``'s values.
    static func stepSum(count: Int) -> Double { (0..<count).reduce(0) { $0 + Double(10 + $1 % 7) } }

    @Test("requests from the opening thread are answered without a reader thread; another thread's request starts it")
    func ownThreadThenAnother() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        try await Self.connectedInPlace(client) { connection in
            _ = try await client.insert(try Self.steps(Self.day0, count: 100))
            for _ in 0..<3 { try await client.ping() }
            let sum = try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum)
            #expect(sum?.statistics.figures.sum == Self.stepSum(count: 100))
            #expect(!connection.hasReaderThread)

            // A request from Swift's global executor cannot read on this thread: the reader thread takes over.
            let elsewhere = try await Task.detached {
                try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum)
            }.value
            #expect(elsewhere?.statistics.figures.sum == Self.stepSum(count: 100))
            #expect(connection.hasReaderThread)
            try await client.ping()
            #expect(try await client.connection() === connection)
        }
        await hkd.stop()
    }

    @Test("requests from other threads while the opening thread reads in place all get their own replies")
    func concurrentRequests() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        let counts = [3, 7, 11, 19, 23, 31, 43, 59]
        for (index, count) in counts.enumerated() {
            let batch = try Self.steps(Self.day0 + Int64(index) * Micros.day, count: count)
            _ = try await client.insert(batch)
        }
        client.close()
        try await Self.onOwnThread {
            _ = try client.connectInPlace()
            /// The sum of day `index`'s steps, as the server computes it.
            @Sendable func day(_ index: Int) async throws -> Double? {
                let start = Self.day0 + Int64(index) * Micros.day
                let filter = SampleFilter(date: DatePredicate(start: start, end: start + Micros.day))
                return try await client.statistics(
                    "stepCount", subject: "anna", options: .cumulativeSum, filter: filter
                )?.statistics.figures.sum
            }
            // Other threads ask for every day many times while this thread asks for them in turn.
            let others = (0..<24).map { round in
                Task.detached { try await day(round % counts.count) }
            }
            for round in 0..<24 {
                #expect(try await day(round % counts.count) == Self.stepSum(count: counts[round % counts.count]))
            }
            for (round, other) in others.enumerated() {
                #expect(try await other.value == Self.stepSum(count: counts[round % counts.count]))
            }
        }
        await hkd.stop()
    }

    @Test("a subscription made from the opening thread gets its updates from the reader thread it starts")
    func subscriptionStartsTheReader() async throws {
        let hkd = try await TestServer()
        let writer = hkd.client(name: "writer")
        defer { writer.close() }
        let client = hkd.client()
        defer { client.close() }
        let anchors = Mutex<[UInt64]>([])
        try await Self.connectedInPlace(client) { connection in
            #expect(!connection.hasReaderThread)
            _ = try await connection.subscribe(
                .observer(subject: "anna", type: "stepCount", filter: .all),
                handlers: .init(
                    update: { update in
                        if case .changed(let anchor) = update.content { anchors.withLock { $0.append(anchor) } }
                    },
                    end: { _ in }))
            #expect(connection.hasReaderThread)
            _ = try await writer.insert(try Self.steps(Self.day0, count: 5))
            try await waitUntil("the observer's update") { anchors.withLock { !$0.isEmpty } }
            // This thread's requests still get their replies, now read by the reader thread.
            let sum = try await client.statistics("stepCount", subject: "anna", options: .cumulativeSum)
            #expect(sum?.statistics.figures.sum == Self.stepSum(count: 5))
        }
        await hkd.stop()
    }

    @Test("a server that goes away while the opening thread waits fails the request instead of hanging")
    func serverGoneWhileReadingInPlace() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        try await Self.connectedInPlace(client) { connection in
            _ = try await connection.send(Ping(nonce: 7))
            await hkd.kill()
            do throws(HealthClientError) {
                _ = try await connection.send(Ping(nonce: 8))
                Issue.record("a ping to a killed server was answered")
            } catch {
                #expect(error.code == .connectionLost, "\(error)")
            }
            #expect(connection.isClosed)
            #expect(!connection.hasReaderThread)
        }
    }
}
