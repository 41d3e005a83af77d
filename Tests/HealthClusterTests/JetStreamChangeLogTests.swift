import HealthCluster
import HealthEngine
import HealthModel
import HealthStorage
import Synchronization
import Testing
import TestSupport

/// The JetStream change log under a real DurableStore: records land in their subject's partition stream framed as
/// in a local segment, a store rebuilt from the streams equals the one that wrote them, a stale writer cannot
/// append, and P is the one recorded at creation.
@Suite("JetStream change log")
struct JetStreamChangeLogTests {
    @Test("Each change is one framed record in its subject's partition stream, at its own sequence")
    func recordsInPartitionStreams() async throws {
        let server = try await NATSServer()
        let (durable, log) = try openNode(url: server.url)
        let subjects = ["anna", "ben", "carla", "dmitri", "eve", "farid"]
        var expected = [Int](repeating: 0, count: log.layout.count)
        for (i, subject) in subjects.enumerated() {
            _ = try durable.insert(stepBatch(id: UInt64(i + 1), subject: subject))
            expected[log.layout.partition(of: subject)] += 1
        }
        _ = try durable.delete(subject: "anna", type: "stepCount", filter: SampleFilter())
        expected[log.layout.partition(of: "anna")] += 1
        for index in 0..<log.layout.count {
            let state = try log.jetStream.streamState(log.layout.streamName(index))
            #expect(state.lastSequence == UInt64(expected[index]), "partition \(index)")
            #expect(log.lastApplied(index) == state.lastSequence)
            for sequence in 1...max(1, state.lastSequence) where state.lastSequence > 0 {
                let bytes = try #require(try log.jetStream.message(log.layout.streamName(index), sequence: sequence))
                let record = try #require(LogReplay.record(bytes), "message \(sequence) of partition \(index)")
                #expect(record.sequence == sequence)
                let change = try LogChange.decode(kind: record.kind, payload: record.payload)
                #expect(log.layout.partition(of: change.subject) == index)
            }
        }
        // At least two partitions hold records: the subjects are spread, not all in one.
        #expect(expected.filter { $0 > 0 }.count >= 2)
    }

    @Test("A store rebuilt from the partition streams holds exactly what the writer acknowledged")
    func rebuildEqualsWriter() async throws {
        let server = try await NATSServer()
        let (writer, writerLog) = try openNode(url: server.url)
        var random = SplitMix64(seed: 21)
        let subjects = (0..<8).map { "subject-\($0)" }
        var last: SampleBatch?
        for id in 1...40 {
            let subject = subjects[Int(random.next() % UInt64(subjects.count))]
            last = stepBatch(id: UInt64(id), subject: subject, from: id * 10, rows: 3)
            _ = try writer.insert(last!)
        }
        // A retried batch repeats its first acknowledgement and logs no second record.
        let retried = try writer.insert(try #require(last))
        #expect(retried.inserted == 3)
        let records = try (0..<writerLog.layout.count).reduce(UInt64(0)) {
            $0 + (try writerLog.jetStream.streamState(writerLog.layout.streamName($1)).lastSequence)
        }
        #expect(records == 40)
        let (reader, _) = try openNode(url: server.url)
        for subject in subjects {
            #expect(
                try reader.store.samples(subject: subject, type: "stepCount")
                    == writer.store.samples(subject: subject, type: "stepCount"), "\(subject)")
        }
        let total = try subjects.reduce(0) { $0 + (try stepCount(reader.store, subject: $1)) }
        #expect(total == 40 * 3)
    }

    @Test("A long partition stream rebuilds in one pass, in order, at the rate an ordered consumer delivers")
    func longStreamRebuilds() async throws {
        let server = try await NATSServer()
        let (writer, writerLog) = try openNode(url: server.url, partitions: 1)
        let records = 3000
        for id in 1...records {
            _ = try writer.insert(stepBatch(id: UInt64(id), subject: "anna", from: id * 2, rows: 2))
        }
        #expect(try writerLog.jetStream.streamState(writerLog.layout.streamName(0)).lastSequence == UInt64(records))
        let started = ContinuousClock.now
        let (reader, readerLog) = try openNode(url: server.url, partitions: 1)
        let elapsed = ContinuousClock.now - started
        #expect(readerLog.lastApplied(0) == UInt64(records))
        #expect(
            try reader.store.samples(subject: "anna", type: "stepCount")
                == writer.store.samples(subject: "anna", type: "stepCount"))
        // What reading message by message (one request each, the way replay read before) costs, for the record.
        let byRequest = ContinuousClock.now
        for sequence in 1...UInt64(records) {
            _ = try readerLog.jetStream.message(readerLog.layout.streamName(0), sequence: sequence)
        }
        print(
            "replayed \(records) records of one partition in \(elapsed) (node opened, streams read, store rebuilt); "
                + "reading them one request each: \(ContinuousClock.now - byRequest)")
    }

    @Test(
        "A writer whose stream moved on is refused, stores nothing and applies nothing, and catches up before it appends again"
    )
    func staleWriterFenced() async throws {
        let server = try await NATSServer()
        let (first, firstLog) = try openNode(url: server.url)
        let (second, secondLog) = try openNode(url: server.url)
        _ = try first.insert(stepBatch(id: 1, subject: "anna"))
        let index = firstLog.layout.partition(of: "anna")
        do {
            _ = try second.insert(stepBatch(id: 2, subject: "anna", from: 100))
            Issue.record("a writer behind the stream appended")
        } catch let error as HealthError {
            #expect(error.code.rawValue == ErrorCode.storageUnavailable.rawValue)
        }
        #expect(try stepCount(second.store, subject: "anna") == 0)
        #expect(try firstLog.jetStream.streamState(firstLog.layout.streamName(index)).lastSequence == 1)
        // The first writer still owns its partition and goes on.
        _ = try first.insert(stepBatch(id: 3, subject: "anna", from: 200))
        #expect(try stepCount(first.store, subject: "anna") == 10)
        // The second refuses changes of the partition until it has applied what the stream holds.
        #expect(secondLog.uncertainPartitions == [index])
        #expect(throws: HealthError.self) { _ = try second.insert(stepBatch(id: 4, subject: "anna", from: 300)) }
        #expect(try secondLog.catchUp(index, into: second.store).replayed == 2)
        #expect(try stepCount(second.store, subject: "anna") == 10)
        _ = try second.insert(stepBatch(id: 4, subject: "anna", from: 300))
        #expect(try stepCount(second.store, subject: "anna") == 15)
    }

    @Test(
        "A confirmed catch-up appends a confirmation after the end it read, which fences the former owner and which replay skips; a stream end below what was applied is refused"
    )
    func confirmedCatchUp() async throws {
        let server = try await NATSServer()
        let (first, firstLog) = try openNode(url: server.url)
        let (second, secondLog) = try openNode(url: server.url)
        _ = try first.insert(stepBatch(id: 1, subject: "anna"))
        let index = firstLog.layout.partition(of: "anna")
        let stream = firstLog.layout.streamName(index)

        // The second node takes the partition over: it replays the record, then confirms after it.
        secondLog.takeOver(index)
        #expect(try secondLog.catchUp(index, into: second.store, confirm: true).replayed == 1)
        #expect(try secondLog.jetStream.streamState(stream).lastSequence == 2)
        #expect(secondLog.lastApplied(index) == 2)
        #expect(secondLog.serves(index))
        // The former owner's next append is fenced by the confirmation; catching up skips it.
        #expect(throws: HealthError.self) { _ = try first.insert(stepBatch(id: 2, subject: "anna", from: 100)) }
        #expect(try firstLog.catchUp(index, into: first.store).replayed == 0)
        #expect(firstLog.lastApplied(index) == 2)
        #expect(try stepCount(first.store, subject: "anna") == 5)
        _ = try second.insert(stepBatch(id: 3, subject: "anna", from: 200))

        // A third node replays both inserts, skipping the confirmation between them, and confirms after them.
        let (third, thirdLog) = try openNode(url: server.url, owned: [])
        thirdLog.takeOver(index)
        #expect(try thirdLog.catchUp(index, into: third.store, confirm: true).replayed == 2)
        #expect(thirdLog.lastApplied(index) == 4)
        #expect(try stepCount(third.store, subject: "anna") == 10)

        // A stream that says it ends before what the node applied (a server not current) is refused, and the
        // partition is not served.
        thirdLog.own(index, after: 99)
        thirdLog.takeOver(index)
        #expect(throws: HealthError.self) { try thirdLog.catchUp(index, into: third.store, confirm: true) }
        #expect(!thirdLog.serves(index))
        #expect(try secondLog.jetStream.streamState(stream).lastSequence == 4)
    }

    @Test(
        "A change acknowledged by JetStream only after the writer's lease could have expired is not acknowledged; the writer catches up with it, and a retry of the batch is recognised"
    )
    func lateAcknowledgementNotAcknowledged() async throws {
        let server = try await NATSServer()
        let lease = LeaseClock()
        let (writer, log) = try openNode(url: server.url, leaseDeadline: { _ in lease.read() })
        _ = try writer.insert(stepBatch(id: 1, subject: "anna"))
        let index = log.layout.partition(of: "anna")
        let stream = log.layout.streamName(index)

        // The NATS server stops answering; the writer publishes within its lease, the lease runs out while the
        // acknowledgement waits, then the server answers: the record is stored, but not acknowledged.
        server.pause()
        lease.expire(.milliseconds(200))
        let late = stepBatch(id: 2, subject: "anna", from: 100)
        let insert = Task.detached { () -> HealthError? in
            do {
                _ = try writer.insert(late)
                return nil
            } catch let error as HealthError {
                return error
            } catch {
                return HealthError(.internalError, "\(error)")
            }
        }
        try await waitUntil(timeout: .seconds(5), "the append to read its lease and the lease to run out") {
            lease.reads > 1 && ContinuousClock.now > lease.deadline
        }
        server.resume()
        let refusal = try #require(await insert.value, "an append acknowledged after its lease was acknowledged")
        #expect(refusal.code.rawValue == ErrorCode.storageUnavailable.rawValue)
        #expect(try log.jetStream.streamState(stream).lastSequence == 2)
        #expect(try stepCount(writer.store, subject: "anna") == 5)
        #expect(log.uncertainPartitions == [index])

        // Past its lease the writer publishes nothing.
        #expect(throws: HealthError.self) { _ = try writer.insert(stepBatch(id: 3, subject: "anna", from: 200)) }
        #expect(try log.jetStream.streamState(stream).lastSequence == 2)

        // Renewed, it catches up with the late record; the client's retry gets the first acknowledgement.
        lease.set(.now + .seconds(3600))
        #expect(try log.catchUp(index, into: writer.store).replayed == 1)
        #expect(try stepCount(writer.store, subject: "anna") == 10)
        #expect(try writer.insert(late).inserted == 5)
        #expect(try log.jetStream.streamState(stream).lastSequence == 2)
        #expect(try stepCount(writer.store, subject: "anna") == 10)
    }

    @Test("The partition count is the one recorded when the cluster was created")
    func partitionCountRecorded() async throws {
        let server = try await NATSServer()
        let jetStream = try JetStream(urls: server.url)
        defer { jetStream.close() }
        let replicas = ClusterReplicas(servers: 1, requested: nil)
        #expect(try ClusterSetup.open(jetStream, partitions: 8, replicas: replicas).count == 8)
        #expect(try ClusterSetup.open(jetStream, partitions: 64, replicas: replicas).count == 8)
        let settings = try jetStream.keyValue(ClusterSetup.settingsBucket)
        #expect(try settings.get(ClusterSetup.partitionsKey)?.value == Array("8".utf8))
        for index in 0..<8 { #expect(try jetStream.streamState("HK_P\(index)").lastSequence == 0) }
    }

    @Test("Partitions are a stable hash of the subject")
    func stablePartitions() {
        let layout = PartitionLayout(count: 64)
        // FNV-1a-64: fixed values, so that every node and every version agrees.
        #expect(layout.partition(of: "") == Int(UInt64(0xcbf2_9ce4_8422_2325) % 64))
        #expect(layout.partition(of: "a") == Int(UInt64(0xaf63_dc4c_8601_ec8c) % 64))
        #expect(layout.streamName(7) == "HK_P7")
        #expect(layout.streamSubject(7) == "hk.p.7")
        #expect(layout.leaseKey(7) == "p.7")
    }
}

/// A lease deadline a test moves, counting how often the change log read it.
private final class LeaseClock: Sendable {
    private let state = Mutex<(deadline: ContinuousClock.Instant, reads: Int, expiring: Duration?)>(
        (.now + .seconds(3600), 0, nil))

    /// The deadline, counted as one read; after ``expire(_:)`` the first read sets it that long ahead.
    func read() -> ContinuousClock.Instant {
        state.withLock { s in
            s.reads += 1
            if let expiring = s.expiring {
                s.deadline = .now + expiring
                s.expiring = nil
            }
            return s.deadline
        }
    }

    var reads: Int { state.withLock { $0.reads } }
    var deadline: ContinuousClock.Instant { state.withLock { $0.deadline } }

    /// The next read sets the deadline `duration` after itself.
    func expire(_ duration: Duration) { state.withLock { $0.expiring = duration } }

    func set(_ deadline: ContinuousClock.Instant) { state.withLock { $0.deadline = deadline } }
}
