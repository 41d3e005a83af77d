import Dispatch
import Foundation
import HealthModel
import Testing

@testable import HealthEngine

@Suite("Concurrency")
struct ConcurrencyTests {
    @Test("readers and writers on several types at once: no crash, every count right")
    func readersAndWriters() throws {
        let store = HealthStore()
        let types = ["stepCount", "heartRate", "bodyMass", "activeEnergyBurned"]
        let batchesPerWriter = 40
        let rowsPerBatch = 50
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: types.count * 2) { worker in
            let type = types[worker / 2]
            do {
                if worker % 2 == 0 {
                    for b in 0..<batchesPerWriter {
                        // Alternate on-time and late batches so both merge paths run under contention.
                        let base = Double(b % 2 == 0 ? b : b - 2) * 1000
                        let rows = (0..<rowsPerBatch).map { (i: Int) -> Row in
                            Row(sec(base + Double(i)), sec(base + Double(i)), 60, i % 2 == 0 ? phone : watch)
                        }
                        _ = try store.insert(makeBatch(subject: "p\(b % 3)", type: type, rows: rows))
                    }
                } else {
                    for _ in 0..<200 {
                        let result = try store.samples(subject: "p0", type: try QuantityType.named(type))
                        if result.starts != result.starts.sorted() { failures.add("\(type) unsorted under writes") }
                        let options: StatisticsOptions =
                            type == "stepCount" || type == "activeEnergyBurned"
                            ? [.cumulativeSum, .separateBySource] : [.discreteAverage, .mostRecent]
                        let error = healthError {
                            _ = try store.statistics(
                                subject: "p1", type: try QuantityType.named(type), options: options)
                        }
                        if let error, error.code != .noData { failures.add(error.message) }
                        _ = store.info()
                    }
                }
            } catch {
                failures.add("\(error)")
            }
        }
        #expect(failures.messages.isEmpty, "\(failures.messages.prefix(3))")
        let info = store.info()
        for type in types { #expect(info.samplesByType[type] == batchesPerWriter * rowsPerBatch) }
        #expect(info.subjects == 3)
        for subject in ["p0", "p1", "p2"] {
            let counts = try types.map { try store.samples(subject: subject, type: QuantityType.named($0)).count }
            let batches = (0..<batchesPerWriter).filter { $0 % 3 == Int(subject.dropFirst())! }.count
            #expect(counts == Array(repeating: batches * rowsPerBatch, count: types.count))
        }
    }
}

/// Failure messages collected from several threads.
private final class Failures: Sendable {
    private let lock = NSLock()
    nonisolated(unsafe) private var list: [String] = []

    func add(_ message: String) { lock.withLock { list.append(message) } }
    var messages: [String] { lock.withLock { list } }
}
