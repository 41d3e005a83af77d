import HealthEngine
import HealthModel
import HealthWire
import Testing

@testable import HealthServer

@Suite("Request dispatcher")
struct RequestDispatcherTests {
    static let limits = SessionLimits(
        maxFrameBytes: 1 << 20, maxInflatedBytes: 4 << 20, maxBatchRows: 500, maxPipelinedRequests: 8,
        idleTimeoutSeconds: 0)
    static let identity = ClientIdentity(name: "tester")
    static let source = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch")

    static func dispatcher(rowsPerFrame: Int = 50_000) -> RequestDispatcher {
        var dispatcher = RequestDispatcher(store: HealthStore(), limits: limits) {
            .init(version: "hkd test", uptimeMicros: 5, connections: 1, residentBytes: 1024)
        }
        dispatcher.rowsPerResultFrame = rowsPerFrame
        return dispatcher
    }

    static func batch(rows: Int, id: UInt64 = 1) -> SampleBatch {
        var batch = SampleBatch(batchID: id, subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for row in 0..<rows {
            let start = Int64(row) * Micros.minute
            batch.append(start: start, end: start + Micros.minute, value: 1, source: source)
        }
        return batch
    }

    @Test("an insert is acknowledged with its batch id and row count")
    func insert() {
        let replies = Self.dispatcher().handle(
            .insert(Insert(batch: Self.batch(rows: 10, id: 77))), identity: Self.identity)
        #expect(replies == [.insertAck(InsertAck(batchID: 77, inserted: 10))])
    }

    @Test("a batch over the announced row limit is refused with batchTooLarge")
    func batchTooLarge() {
        let replies = Self.dispatcher().handle(.insert(Insert(batch: Self.batch(rows: 501))), identity: Self.identity)
        guard case .error(let reply) = replies.first else {
            Issue.record("\(replies)")
            return
        }
        #expect(reply.code == ErrorCode.batchTooLarge.rawValue)
        #expect(reply.message == "batch 1 has 501 rows; this server accepts at most 500")
    }

    @Test("sample results are split into frames of at most rowsPerResultFrame rows, all rows in order")
    func streaming() {
        let dispatcher = Self.dispatcher(rowsPerFrame: 100)
        _ = dispatcher.handle(.insert(Insert(batch: Self.batch(rows: 450))), identity: Self.identity)
        let replies = dispatcher.handle(
            .sampleQuery(SampleQuery(subject: "anna", type: "stepCount")), identity: Self.identity)
        let batches = replies.compactMap { reply -> SampleBatch? in
            if case .sampleResult(let result) = reply { return result.batch }
            return nil
        }
        #expect(batches.map(\.count) == [100, 100, 100, 100, 50])
        #expect(batches.flatMap(\.starts) == (0..<450).map { Int64($0) * Micros.minute })
        #expect(batches.allSatisfy { $0.uuids?.count == $0.count })

        let empty = dispatcher.handle(
            .sampleQuery(SampleQuery(subject: "nobody", type: "stepCount")), identity: Self.identity)
        #expect(empty.count == 1, "an empty result is one frame with no rows")
    }

    @Test("a limit that cuts a result puts the next page's token on its last frame only")
    func pageTokenOnLastFrame() throws {
        let dispatcher = Self.dispatcher(rowsPerFrame: 100)
        _ = dispatcher.handle(.insert(Insert(batch: Self.batch(rows: 450))), identity: Self.identity)
        /// The frames answering a page of 250 rows after `after`.
        func page(after: PageToken?) -> [SampleResult] {
            dispatcher.handle(
                .sampleQuery(SampleQuery(subject: "anna", type: "stepCount", limit: 250, after: after)),
                identity: Self.identity
            ).compactMap { reply in
                if case .sampleResult(let result) = reply { return result }
                return nil
            }
        }
        let first = page(after: nil)
        #expect(first.map(\.batch.count) == [100, 100, 50])
        #expect(first.dropLast().allSatisfy { $0.next == nil })
        let token = try #require(first.last?.next)
        #expect(
            try token.position()
                == SamplePosition(
                    sort: .startAscending, start: 249 * Micros.minute, end: 250 * Micros.minute, anchor: 250))
        let second = page(after: token)
        #expect(second.flatMap(\.batch.starts) == (250..<450).map { Int64($0) * Micros.minute })
        #expect(second.allSatisfy { $0.next == nil }, "the rest fits the limit: no token")

        let wrongSort = dispatcher.handle(
            .sampleQuery(SampleQuery(subject: "anna", type: "stepCount", sort: .endAscending, after: token)),
            identity: Self.identity)
        guard case .error(let reply) = wrongSort.first else {
            Issue.record("\(wrongSort)")
            return
        }
        #expect(reply.code == ErrorCode.invalidArgument.rawValue)
    }

    @Test("statistics name the unit of their figures; no data is an error")
    func statistics() {
        let dispatcher = Self.dispatcher()
        _ = dispatcher.handle(.insert(Insert(batch: Self.batch(rows: 60))), identity: Self.identity)
        let replies = dispatcher.handle(
            .statisticsQuery(StatisticsQuery(subject: "anna", type: "stepCount", options: .cumulativeSum)),
            identity: Self.identity)
        guard case .statisticsResult(let result) = replies.first else {
            Issue.record("\(replies)")
            return
        }
        #expect(result.unit == "count")
        #expect(result.statistics.figures.sum == 60)
        let none = dispatcher.handle(
            .statisticsQuery(StatisticsQuery(subject: "ben", type: "stepCount", options: .cumulativeSum)),
            identity: Self.identity)
        guard case .error(let reply) = none.first else {
            Issue.record("\(none)")
            return
        }
        #expect(reply.code == ErrorCode.noData.rawValue)
    }

    @Test("server info reports the store's contents and the server's status")
    func serverInfo() {
        let dispatcher = Self.dispatcher()
        _ = dispatcher.handle(.insert(Insert(batch: Self.batch(rows: 3))), identity: Self.identity)
        let replies = dispatcher.handle(.serverInfoQuery(ServerInfoQuery()), identity: Self.identity)
        guard case .serverInfo(var info) = replies.first, replies.count == 1 else {
            Issue.record("\(replies)")
            return
        }
        // The store's memory by structure, every part named in order; the three rows are in the head.
        #expect(info.memoryParts.map(\.name) == StoreMemory().parts.map(\.name))
        #expect(info.memoryParts.first { $0.name == "head" }.map { $0.bytes > 0 } == true)
        info.memoryParts = []
        #expect(
            info
                == ServerInfo(
                    serverVersion: "hkd test", uptimeMicros: 5, connections: 1, residentBytes: 1024, subjects: 1,
                    samplesPerType: [.init(type: "stepCount", samples: 3)]))
    }

    @Test("source priority set by name is returned in that order")
    func sourcePriority() {
        let dispatcher = Self.dispatcher()
        var batch = Self.batch(rows: 2)
        batch.append(
            start: 0, end: Micros.minute, value: 1,
            source: SourceInfo(name: "iPhone", bundleIdentifier: "com.apple.health.phone"))
        _ = dispatcher.handle(.insert(Insert(batch: batch)), identity: Self.identity)
        let replies = dispatcher.handle(
            .setSourcePriority(SetSourcePriority(subject: "anna", type: "stepCount", order: ["iPhone"])),
            identity: Self.identity)
        guard case .sourcePriority(let priority) = replies.first else {
            Issue.record("\(replies)")
            return
        }
        #expect(priority.sources.map(\.name) == ["iPhone", "Watch"])
    }
}
