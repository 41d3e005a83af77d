import Foundation
import HealthModel
import HealthPosix
import HealthStorage
import Synchronization

/// `hkbench storage`: the W1 dataset through the durable store (write-ahead log, fsync always, no network),
/// then start-up from the log alone and from a snapshot.
enum StorageBenchmark: BenchCommand {
    static let name = "storage"
    static let abstract = "Durable ingest (log + fsync), log and snapshot bytes per sample, start-up time."
    static let options: [(flag: String, help: String)] = [
        ("--subjects <n>", "Copies of the W1 dataset, one per subject (default 2: about 10.5 M samples)."),
        ("--threads <n>", "Inserting threads (default 2)."),
        ("--fsync <n>", "0 always, 1 interval, 2 never (default 0: always)."),
    ]

    static func run(_ options: ParsedOptions) throws {
        let subjects = try options.integer("--subjects", default: 2, in: 1...64)
        let threads = try options.integer("--threads", default: 2, in: 1...64)
        let policy = [FsyncPolicy.always, .interval, .never][try options.integer("--fsync", default: 0, in: 0...2)]
        var batches: [SampleBatch] = []
        for subject in 0..<subjects {
            let dataset = W1Dataset(subject: "w1-\(subject)")
            for series in W1Dataset.Series.allCases {
                for var batch in dataset.batches(series) {
                    batch.batchID |= UInt64(subject) << 40 | (series == .heartRate ? 1 << 32 : 0)
                    batches.append(batch)
                }
            }
        }
        let samples = batches.reduce(0) { $0 + $1.count }
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "hkbench-storage")
        defer { try? FileSystem.removeTree(directory) }
        let configuration = StorageConfiguration(
            directory: directory, fsync: policy, snapshotIntervalSeconds: 0, snapshotLogBytes: 0)
        print(
            "hkbench storage: \(samples) samples in \(batches.count) batches, \(threads) threads, fsync \(policy.rawValue)\n"
        )

        let all = batches
        let writer = try DurableStore(configuration, log: { print("  \($0)") })
        let next = Atomic<Int>(0)
        let ingest = try Stopwatch.best(of: 1) {
            let failures = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: threads) { _ in
                while true {
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < all.count else { return }
                    if (try? writer.insert(all[index])) == nil { failures.add(1, ordering: .relaxed) }
                }
            }
            if failures.load(ordering: .relaxed) > 0 {
                throw UsageError(message: "\(failures.load(ordering: .relaxed)) inserts failed")
            }
        }
        let logBytes = writer.logBytesWritten
        print(
            String(
                format: "ingest          %.2f M samples/s acknowledged (%.2f s)", Double(samples) / ingest / 1e6, ingest
            ))
        print(String(format: "log             %.2f bytes per sample", Double(logBytes) / Double(samples)))
        writer.close(snapshot: false)

        var store = writer
        var loaded = 0
        let fromLog = try Stopwatch.best(of: 1) {
            store = try DurableStore(configuration, log: { _ in })
            loaded = store.store.info().totalSamples
        }
        print(String(format: "start-up (log)  %.2f s for %d samples", fromLog, loaded))
        let snapshotStart = ContinuousClock.now
        guard let report = try store.snapshot() else { return }
        let snapshotTime = ContinuousClock.now - snapshotStart
        print(
            String(
                format: "snapshot        %.2f bytes per sample, written in %@",
                Double(report.bytes) / Double(report.samples), "\(snapshotTime)"))
        store.close(snapshot: false)
        let fromSnapshot = try Stopwatch.best(of: 1) {
            store = try DurableStore(configuration, log: { _ in })
            loaded = store.store.info().totalSamples
        }
        print(String(format: "start-up (snap) %.2f s for %d samples", fromSnapshot, loaded))
        store.close(snapshot: false)
    }
}
