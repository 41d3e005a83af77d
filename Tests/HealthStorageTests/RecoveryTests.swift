import Foundation
import HealthEngine
import HealthModel
import HealthPosix
import TestSupport
import Testing

@testable import HealthStorage

/// Start-up after clean stops, crashes and damage: snapshots, log replay, torn tails, corruption, repair.
@Suite(.serialized)
struct RecoveryTests {
    @Test("changes are replayed from the log after a stop without a snapshot")
    func replayWithoutSnapshot() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        let first = stepBatch(id: 1, rows: 20)
        _ = try durable.insert(first)
        _ = try durable.insert(first)  // a retry: logged once
        _ = try durable.insert(stepBatch(id: 2, subject: "ben", from: 100, rows: 5))
        #expect(
            try durable.delete(subject: "anna", type: "stepCount", filter: SampleFilter(uuids: [first.uuids![3]])) == 1)
        try durable.setSourcePriority(subject: "anna", type: "stepCount", order: [SourceInfo(name: "Phone"), watch])
        let before = try steps(durable.store)
        durable.close(snapshot: false)

        let (reopened, _) = try openStore(directory)
        defer { reopened.close() }
        #expect(reopened.recovery.replayedRecords == 4)
        #expect(try steps(reopened.store) == before)
        #expect(try steps(reopened.store).count == 19)
        #expect(try steps(reopened.store, subject: "ben").count == 5)
        #expect(try reopened.store.sourcePriority(subject: "anna", type: "stepCount").first?.name == "Phone")
        // The retried batch is still recognised after the restart.
        #expect(try reopened.insert(first) == InsertResult(inserted: 20, duplicates: 0))
        #expect(try steps(reopened.store).count == 19)
    }

    @Test("replay runs each store's records in one lane, the lanes side by side: the same samples and anchors")
    func lanesKeepEachStoresOrder() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        var random = SplitMix64(seed: TestSeed.value(61))
        let types = [
            ("stepCount", "count"), ("heartRate", "count/min"), ("bodyMass", "kg"), ("flightsClimbed", "count"),
        ]
        let subjects = ["anna", "ben", "carla"]
        var logged = 0
        for id in 1...240 {
            let (type, unit) = types[Int(random.next() % UInt64(types.count))]
            let subject = subjects[Int(random.next() % UInt64(subjects.count))]
            if random.next() % 6 == 0 {
                let deleted = try durable.delete(
                    subject: subject, type: try QuantityType.named(type),
                    filter: SampleFilter(date: DatePredicate(start: Int64(random.next() % 400) * Micros.minute)))
                if deleted > 0 { logged += 1 }  // a deletion of nothing logs nothing
                continue
            }
            var batch = SampleBatch(batchID: UInt64(id), subject: subject, typeIdentifier: type, unit: unit)
            let first = Int(random.next() % 500)
            for minute in first..<first + 1 + Int(random.next() % 30) {
                let start = Int64(minute) * Micros.minute
                batch.append(
                    start: start, end: start + Micros.minute, value: Double(50 + random.next() % 40), source: watch)
            }
            _ = try durable.insert(batch)
            logged += 1
        }
        func state(_ store: HealthStore) throws -> [String] {
            try subjects.flatMap { subject in
                try types.map { type, _ in
                    "\(try store.changes(subject: subject, type: try QuantityType.named(type), anchor: 0))"
                        + "\(try store.samples(subject: subject, type: try QuantityType.named(type)))"
                }
            }
        }
        let before = try state(durable.store)
        durable.close(snapshot: false)
        let (reopened, _) = try openStore(directory)
        defer { reopened.close(snapshot: false) }
        #expect(reopened.recovery.replayedRecords == logged)
        #expect(try state(reopened.store) == before)
    }

    @Test("replay seals each series' rows into blocks as they come: a few bytes a sample, head included")
    func replaySealsBlocks() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        for batch in 0..<40 {
            _ = try durable.insert(
                stepBatch(id: UInt64(batch + 1), from: batch * 2_000, rows: 2_000, derivedUUIDs: true))
        }
        durable.close(snapshot: false)

        let (reopened, _) = try openStore(directory)
        defer { reopened.close() }
        let info = reopened.store.info()
        #expect(info.totalSamples == 80_000)
        // 19 sealed blocks of 4,096 rows and a head of 2,176 rows at 34 bytes each (about 0.9 bytes a sample of
        // the series), plus the batch table, change log and sources.
        let perSample = Double(info.approximateBytes) / 80_000
        #expect(perSample > 0.5 && perSample < 4, "\(perSample) bytes a sample")
    }

    @Test("a snapshot holds everything before it; the log before it is dropped and the rest replayed")
    func snapshotThenLog() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        for id in 1...5 { _ = try durable.insert(stepBatch(id: UInt64(id), from: id * 10)) }
        let report = try #require(try durable.snapshot())
        #expect(report.samples == 50)
        #expect(try segments(directory).count == 1)
        _ = try durable.insert(stepBatch(id: 6, from: 1000))
        #expect(
            try durable.delete(
                subject: "anna", type: "stepCount", filter: SampleFilter(date: DatePredicate(end: 20 * Micros.minute)))
                == 10)
        let expected = try steps(durable.store)
        durable.close(snapshot: false)

        let (reopened, _) = try openStore(directory)
        #expect(reopened.recovery.snapshotSamples == 50)
        #expect(reopened.recovery.replayedRecords == 2)
        #expect(try steps(reopened.store) == expected)
        reopened.close()  // with a final snapshot
        let (third, _) = try openStore(directory)
        defer { third.close() }
        #expect(third.recovery.replayedRecords == 0)
        #expect(third.recovery.snapshotSamples == 50)
        #expect(try steps(third.store) == expected)
    }

    @Test("a torn last record (never acknowledged) is cut off with a log line naming the bytes, and the rest is kept")
    func tornTail() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        _ = try durable.insert(stepBatch(id: 1))
        _ = try durable.insert(stepBatch(id: 2, from: 50))
        durable.close(snapshot: false)
        // A crash in the middle of writing a third record (never acknowledged) leaves part of it.
        let segment = try #require(try segments(directory).last)
        let record = LogFraming.record(kind: 1, sequence: 3, payload: Array(repeating: 7, count: 60))
        try appendBytes(segment, Array(record.prefix(40)))

        let (reopened, lines) = try openStore(directory)
        defer { reopened.close() }
        #expect(try steps(reopened.store).count == 20)
        let torn = reopened.recovery.tornBytes
        #expect(torn > 0)
        #expect(lines.all.contains { $0.contains("cut off \(torn) bytes") && $0.contains(segment) })
    }

    @Test(
        "a flipped byte in the middle of the log stops start-up naming file and offset; --repair keeps what precedes it"
    )
    func corruptLog() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        for id in 1...3 { _ = try durable.insert(stepBatch(id: UInt64(id), from: id * 100)) }
        durable.close(snapshot: false)
        let segment = try #require(try segments(directory).last)
        let bytes = try FileSystem.readFile(segment)
        let second = LogFraming.scan(bytes).records[1].offset
        try flipByte(segment, at: second + 30)

        #expect {
            try openStore(directory)
        } throws: { error in
            guard let error = error as? HealthError else { return false }
            return error.code == .storageUnavailable && error.message.contains(segment)
                && error.message.contains("offset \(second)") && error.message.contains("--repair")
        }
        let (repaired, lines) = try openStore(directory, repair: true)
        #expect(try steps(repaired.store).count == 10)
        #expect(lines.all.contains { $0.contains("repair") && $0.contains("offset \(second)") })
        _ = try repaired.insert(stepBatch(id: 9, from: 900))
        repaired.close(snapshot: false)
        let (again, _) = try openStore(directory)
        defer { again.close() }
        #expect(try steps(again.store).count == 20)
    }

    @Test("a damaged or missing snapshot stops start-up naming the file; --repair starts without it")
    func damagedSnapshot() throws {
        for damage in ["flip", "remove"] {
            let directory = try makeDataDirectory()
            defer { try? FileSystem.removeTree(directory) }
            let (durable, _) = try openStore(directory)
            _ = try durable.insert(stepBatch(id: 1, rows: 30))
            _ = try durable.insert(stepBatch(id: 2, subject: "ben", rows: 3))
            durable.close()  // snapshot
            let snapshot = directory + "/snapshots/stepCount-1.snap"
            if damage == "flip" { try flipByte(snapshot, at: 100) } else { try FileSystem.remove(snapshot) }
            #expect {
                try openStore(directory)
            } throws: { error in
                (error as? HealthError)?.code == .storageUnavailable
                    && ((error as? HealthError)?.message.contains(snapshot) ?? false)
            }
            let (repaired, lines) = try openStore(directory, repair: true)
            #expect(repaired.store.info().totalSamples == 0)
            #expect(lines.all.contains { $0.contains("left out the snapshot of stepCount") })
            repaired.close(snapshot: false)
        }
    }

    @Test("a full disk fails the insert with a retryable error, stores nothing, and the retry succeeds")
    func fullDisk() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let opener = FailingOpener()
        let (durable, _) = try openStore(directory, opener: opener)
        _ = try durable.insert(stepBatch(id: 1))
        opener.failing.store(true, ordering: .relaxed)
        let batch = stepBatch(id: 2, from: 100)
        #expect {
            try durable.insert(batch)
        } throws: { error in
            guard let error = error as? HealthError else { return false }
            return error.code == .storageUnavailable && error.isRetryable && error.message.contains("No space")
        }
        #expect(try steps(durable.store).count == 10)
        opener.failing.store(false, ordering: .relaxed)
        #expect(try durable.insert(batch).inserted == 10)
        durable.close(snapshot: false)
        let (reopened, lines) = try openStore(directory)
        defer { reopened.close() }
        #expect(try steps(reopened.store).count == 20)
        #expect(lines.all.isEmpty, "the half-written record was cut off at once: \(lines.all)")
    }

    @Test("a failed fsync fails the waiting insert and every later change until restart")
    func failedSync() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let opener = FailingOpener()
        let (durable, _) = try openStore(directory, opener: opener)
        defer { durable.close(snapshot: false) }
        opener.failSync.store(true, ordering: .relaxed)
        #expect { try durable.insert(stepBatch(id: 1)) } throws: { ($0 as? HealthError)?.code == .storageUnavailable }
        opener.failSync.store(false, ordering: .relaxed)
        #expect { try durable.insert(stepBatch(id: 2, from: 50)) } throws: {
            ($0 as? HealthError)?.code == .storageUnavailable
        }
    }

    @Test("sync-version replacements and deletions survive restarts, before and after a snapshot")
    func syncAndDeleteSurvive() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        func synced(_ version: Int, _ value: Double) -> SampleBatch {
            var batch = SampleBatch(
                batchID: uniqueBatchID(), subject: "anna", typeIdentifier: "bodyMass", unit: "kg")
            batch.append(
                start: Int64(version), end: Int64(version), value: value, source: watch, uuid: UUID(),
                metadata: [MetadataKey.syncIdentifier: .string("m"), MetadataKey.syncVersion: .number(Double(version))])
            return batch
        }
        var (durable, _) = try openStore(directory)
        _ = try durable.insert(synced(1, 70))
        _ = try durable.insert(synced(2, 71))
        durable.close(snapshot: false)
        (durable, _) = try openStore(directory)
        #expect(try durable.store.samples(subject: "anna", type: "bodyMass").values == [71])
        #expect(try durable.insert(synced(1, 69)).duplicates == 1)
        _ = try durable.snapshot()
        _ = try durable.insert(synced(3, 72))
        durable.close(snapshot: false)
        (durable, _) = try openStore(directory)
        #expect(try durable.store.samples(subject: "anna", type: "bodyMass").values == [72])
        #expect(try durable.delete(subject: "anna", type: "bodyMass", filter: .all) == 1)
        durable.close()
        (durable, _) = try openStore(directory)
        defer { durable.close() }
        #expect(durable.store.info().totalSamples == 0)
        #expect(try durable.insert(synced(3, 72)).inserted == 1)
    }

    @Test("concurrent inserts share fsyncs and all become durable")
    func groupCommit() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for i in 0..<10 {
                _ = try? durable.insert(
                    stepBatch(id: UInt64(worker * 100 + i + 1), subject: "s\(worker)", from: i * 10))
            }
        }
        durable.close(snapshot: false)
        let (reopened, _) = try openStore(directory)
        defer { reopened.close() }
        #expect(reopened.store.info().totalSamples == 800)
    }
}
