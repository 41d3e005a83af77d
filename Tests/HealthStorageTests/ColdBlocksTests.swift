import Foundation
import HealthEngine
import HealthModel
import HealthPosix
import Testing
import TestSupport

@testable import HealthStorage

/// `--memory-limit`: sealed blocks moved to mapped segment files answer exactly as in memory, the least recently
/// read series go first, a snapshot copies cold blocks' bytes, and segment files go with their last block.
struct ColdBlocksTests {
    static let subjects = ["anna", "ben", "carla", "dmitri"]

    /// A store with several blocks of steps and heart rate per subject, from two sources, with late rows and a
    /// deletion.
    static func store(seed: UInt64) throws -> HealthStore {
        let store = HealthStore()
        var random = SplitMix64(seed: seed)
        let phone = SourceInfo(name: "Phone", bundleIdentifier: "com.apple.health.phone")
        for (n, subject) in subjects.enumerated() {
            var id = UInt64(n * 100)
            for (type, unit) in [("stepCount", "count"), ("heartRate", "count/min")] {
                id += 1
                var batch = SampleBatch(batchID: id, subject: subject, typeIdentifier: type, unit: unit)
                for minute in 0..<(8_500 + Int(random.next() % 2_000)) {
                    let start = Int64(minute) * Micros.minute
                    batch.append(
                        start: start, end: start + Micros.minute, value: Double(40 + random.next() % 100),
                        source: random.next() % 5 == 0 ? phone : watch)
                }
                _ = try store.insert(batch, beforeApplying: {})
            }
            // Late rows into the sealed range, and a deletion.
            _ = try store.insert(stepBatch(id: id + 1, subject: subject, from: 500, rows: 30), beforeApplying: {})
            _ = try store.delete(
                subject: subject, type: "heartRate",
                filter: SampleFilter(date: DatePredicate(start: 2_000 * Micros.minute, end: 2_100 * Micros.minute)))
        }
        return store
    }

    /// What queries answer over every subject: samples, statistics and daily and hourly collections.
    static func answers(_ store: HealthStore) throws -> [String] {
        var answers: [String] = []
        for subject in subjects {
            answers.append("\(try store.samples(subject: subject, type: "stepCount"))")
            answers.append("\(try store.samples(subject: subject, type: "heartRate"))")
            answers.append(
                "\(try store.statistics(subject: subject, type: "stepCount", options: [.cumulativeSum, .separateBySource]))"
            )
            answers.append(
                "\(try store.statistics(subject: subject, type: "heartRate", options: [.discreteAverage, .discreteMin, .discreteMax, .mostRecent]))"
            )
            answers.append(
                "\(try store.collection(subject: subject, type: "stepCount", options: .cumulativeSum, anchor: 0, interval: CalendarInterval(1, .day), timeZone: "Europe/Berlin"))"
            )
            answers.append(
                "\(try store.collection(subject: subject, type: "heartRate", options: .discreteAverage, anchor: 0, interval: CalendarInterval(1, .hour), timeZone: "UTC"))"
            )
            answers.append("\(try store.changes(subject: subject, type: "stepCount", anchor: 0))")
        }
        return answers
    }

    @Test("Blocks moved to segment files answer every query exactly as in memory; a snapshot holds the same bytes")
    func coldAnswersTheSame() throws {
        let store = try Self.store(seed: TestSeed.value(41))
        let before = try Self.answers(store)
        let stepCount = try QuantityType.named("stepCount")
        let image = SnapshotCodec.encode(store.image(of: stepCount) { () }.0, sequence: 1)
        let hot = store.blockResidency()
        #expect(hot.hotBlocks >= 16)
        #expect(hot.coldBytes == 0)

        let directory = try makeDataDirectory()
        let cold = try ColdBlocks(directory: directory + "/cold", limit: 0, store: store) { _ in }
        let moved = try cold.pass()
        #expect(moved == hot.hotBlocks)
        let after = store.blockResidency()
        #expect(after.hotBytes == 0)
        #expect(after.coldBytes == hot.hotBytes)
        #expect(try FileSystem.contentsOfDirectory(directory + "/cold").contains { $0.hasSuffix(".seg") })
        #expect(try Self.answers(store) == before)
        #expect(SnapshotCodec.encode(store.image(of: stepCount) { () }.0, sequence: 1) == image)

        // Changes still work on cold blocks: a late row reseals its block in memory, a deletion too.
        _ = try store.insert(stepBatch(id: 9_000, subject: "anna", from: 700, rows: 3), beforeApplying: {})
        _ = try store.delete(
            subject: "ben", type: "stepCount",
            filter: SampleFilter(date: DatePredicate(start: 0, end: 100 * Micros.minute)))
        #expect(store.blockResidency().hotBlocks == 2)
        let reference = try Self.store(seed: TestSeed.value(41))
        _ = try reference.insert(stepBatch(id: 9_000, subject: "anna", from: 700, rows: 3), beforeApplying: {})
        _ = try reference.delete(
            subject: "ben", type: "stepCount",
            filter: SampleFilter(date: DatePredicate(start: 0, end: 100 * Micros.minute)))
        // (The reference has other random UUIDs: compare what does not depend on them.)
        for subject in Self.subjects {
            let a = try store.samples(subject: subject, type: "stepCount")
            let b = try reference.samples(subject: subject, type: "stepCount")
            #expect(a.starts == b.starts && a.values == b.values, "\(subject)")
        }
    }

    @Test("Within the limit nothing moves; beyond it the least recently read series go first, to 90 % of it")
    func leastRecentlyUsedFirst() throws {
        let store = try Self.store(seed: TestSeed.value(42))
        let total = store.blockResidency().hotBytes
        let directory = try makeDataDirectory()
        #expect(try ColdBlocks(directory: directory + "/a", limit: total, store: store) { _ in }.pass() == 0)
        // Read carla's and dmitri's steps last: their blocks stay. (Recency counts by the mover's passes: each
        // listing of the hot blocks starts a new epoch of reads.)
        for subject in ["anna", "ben", "carla", "dmitri"] { _ = try store.samples(subject: subject, type: "heartRate") }
        _ = store.hotBlocks()
        for subject in ["anna", "ben", "carla", "dmitri"] { _ = try store.samples(subject: subject, type: "stepCount") }
        _ = store.hotBlocks()
        _ = try store.samples(subject: "carla", type: "stepCount")
        _ = try store.samples(subject: "dmitri", type: "stepCount")
        let limit = total / 2
        let cold = try ColdBlocks(directory: directory + "/b", limit: limit, store: store) { _ in }
        #expect(try cold.pass() > 0)
        let residency = store.blockResidency()
        #expect(residency.hotBytes <= limit / 10 * 9)
        #expect(residency.hotBytes > limit / 2, "it moves only what brings it under the limit")
        let hot = Set(store.hotBlocks().map { "\($0.type.identifier) \($0.subject)" })
        #expect(hot.contains("stepCount carla") && hot.contains("stepCount dmitri"), "\(hot)")
        #expect(!hot.contains("heartRate anna"), "\(hot)")
    }

    @Test("Start-up with cold snapshots leaves every sealed block in the mapped snapshot files, answering the same")
    func coldStartUp() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        var configuration = StorageConfiguration(
            directory: directory, fsync: .never, snapshotIntervalSeconds: 0, snapshotLogBytes: 0)
        let writer = try DurableStore(configuration) { _ in }
        _ = try writer.insert(stepBatch(id: 1, rows: 30_000))
        _ = try writer.insert(stepBatch(id: 2, subject: "ben", from: 100, rows: 9_000))
        let before = try Self.answersOf(writer.store)
        writer.close()  // a snapshot

        configuration.coldSnapshots = true
        let reader = try DurableStore(configuration) { _ in }
        let residency = reader.store.blockResidency()
        #expect(residency.hotBlocks == 0)
        #expect(residency.coldBlocks >= 8)
        #expect(try Self.answersOf(reader.store) == before)
        // A change reseals the blocks it touches in memory; the rest stay where they are.
        _ = try reader.delete(
            subject: "anna", type: "stepCount",
            filter: SampleFilter(date: DatePredicate(start: 0, end: 10 * Micros.minute)))
        #expect(reader.store.blockResidency().hotBlocks == 1)
        // The next snapshot copies the cold blocks' bytes into its own files.
        let after = try Self.answersOf(reader.store)
        reader.close()
        configuration.coldSnapshots = false
        let again = try DurableStore(configuration) { _ in }
        defer { again.close(snapshot: false) }
        #expect(try Self.answersOf(again.store) == after)
        #expect(again.store.blockResidency().coldBlocks == 0)
    }

    static func answersOf(_ store: HealthStore) throws -> [String] {
        try ["anna", "ben"].flatMap { subject in
            [
                "\(try store.samples(subject: subject, type: "stepCount"))",
                "\(try store.collection(subject: subject, type: "stepCount", options: .cumulativeSum, anchor: 0, interval: CalendarInterval(1, .hour), timeZone: "UTC"))",
            ]
        }
    }

    @Test("A segment file is removed once no block points into it; start-up removes a previous run's")
    func segmentsGoWithTheirBlocks() throws {
        let store = HealthStore()
        _ = try store.insert(stepBatch(id: 1, rows: 20_000), beforeApplying: {})
        let directory = try makeDataDirectory() + "/cold"
        let cold = try ColdBlocks(directory: directory, limit: 0, store: store) { _ in }
        #expect(try cold.pass() == 4)
        #expect(try FileSystem.contentsOfDirectory(directory).filter { $0.hasSuffix(".seg") }.count == 1)
        _ = try store.delete(subject: "anna", type: "stepCount", filter: SampleFilter())
        #expect(store.blockResidency() == BlockResidency())
        #expect(try FileSystem.contentsOfDirectory(directory).filter { $0.hasSuffix(".seg") }.isEmpty)

        try FileSystem.writeFileAtomically(directory + "/7.seg", [1, 2, 3])
        _ = try ColdBlocks(directory: directory, limit: 0, store: store) { _ in }
        #expect(try FileSystem.contentsOfDirectory(directory).filter { $0.hasSuffix(".seg") }.isEmpty)
    }
}
