import Foundation
import HealthClient
import HealthModel
import Synchronization
import TestSupport
import Testing

/// `hkq admin backup` under write load, then `hkd --restore-from`: every sample acknowledged before the backup
/// started is there exactly once.
@Suite("backup and restore", .serialized)
struct BackupTests {
    static func batch(_ index: Int) -> [Sample] {
        let type = try! QuantityType.named("stepCount")
        let unit = try! HealthUnit(parsing: "count")
        return (0..<50).map { row in
            let start = Int64(1_700_000_000 + (index * 50 + row) * 60) * Micros.second
            return Sample(
                uuid: UUID(), subject: "anna", type: type, start: start, end: start + Micros.minute, value: 1,
                unit: unit,
                source: SourceInfo(name: "Watch"))
        }
    }

    @Test("an online backup taken under writes restores every sample acknowledged before it, once")
    func backupUnderLoad() async throws {
        let hkd = try await HKDProcess()
        let backup = FileManager.default.temporaryDirectory.appendingPathComponent("hkd-backup-\(UUID().uuidString)")
            .path
        let restored = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hkd-restored-\(UUID().uuidString)"
        ).path
        defer {
            try? FileManager.default.removeItem(atPath: backup)
            try? FileManager.default.removeItem(atPath: restored)
        }
        let acknowledged = Mutex<[[UUID]]>([])
        let stop = Atomic<Bool>(false)
        let writer = hkd.client(name: "writer")
        let writerFailure = Mutex<String?>(nil)
        let load = Task {
            var index = 0
            while !stop.load(ordering: .relaxed) {
                let samples = Self.batch(index)
                do {
                    _ = try await writer.insert(samples)
                } catch {
                    writerFailure.withLock { $0 = "the writer's insert failed: \(error)" }
                    return
                }
                acknowledged.withLock { $0.append(samples.map(\.uuid)) }
                index += 1
            }
        }
        // Synchronise on the writer having made progress, then back up while it goes on.
        try await waitUntil(timeout: .seconds(120), "the writer to have 20 batches acknowledged") {
            acknowledged.withLock { $0.count } >= 20
        }
        let before = acknowledged.withLock { $0.flatMap { $0 } }
        let admin = hkd.client(name: "admin")
        let result = try await admin.backup(to: backup)
        #expect(result.samples >= UInt64(before.count))
        #expect(result.files >= 3)
        let afterBackup = acknowledged.withLock { $0.count }
        // A writer that failed ends the wait too, so that its error is what the test reports.
        try await waitUntil("5 more batches after the backup") {
            writerFailure.withLock { $0 != nil } || acknowledged.withLock { $0.count } >= afterBackup + 5
        }
        stop.store(true, ordering: .relaxed)
        await load.value
        #expect(writerFailure.withLock { $0 } == nil)
        writer.close()
        admin.close()
        // A backup directory that is not empty is refused.
        let again = hkd.client(name: "again")
        await #expect(throws: HealthClientError.self) { _ = try await again.backup(to: backup) }
        again.close()
        await hkd.stop()

        let copy = try await HKDProcess(dataDirectory: restored, arguments: ["--restore-from", backup])
        let reader = copy.client(token: hkd.token)
        defer { reader.close() }
        let stored = try await reader.samples("stepCount", subject: "anna")
        var count: [UUID: Int] = [:]
        for sample in stored { count[sample.uuid, default: 0] += 1 }
        #expect(count.values.allSatisfy { $0 == 1 }, "a sample is stored twice")
        let missing = before.filter { count[$0] == nil }
        #expect(missing.isEmpty, "\(missing.count) samples acknowledged before the backup are missing")
        #expect(copy.logText.contains("restored the backup"))
        await copy.stop()
    }
}
