import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthPosix

/// What start-up found and did.
public struct RecoveryReport: Sendable {
    /// Samples loaded from snapshots.
    public var snapshotSamples = 0
    /// Log records replayed (records already in a snapshot are skipped, not counted).
    public var replayedRecords = 0
    /// Log records skipped because a snapshot holds them.
    public var skippedRecords = 0
    /// Intact log records that could not be applied, kept aside in `quarantine/` (see ``Recovery``).
    public var quarantinedRecords = 0
    /// Bytes cut off a torn last record.
    public var tornBytes = 0
    /// What `--repair` gave up, one line each; empty without damage.
    public var repairs: [String] = []
    /// The sequence number the next record gets.
    public var nextSequence: UInt64 = 1
    /// The snapshot generation loaded, if any.
    public var manifest: SnapshotManifest?
}

/// Start-up: loads the snapshots named by the manifest, then replays the log records after them.
///
/// Damage stops start-up with a ``ErrorCode/storageUnavailable`` error naming the file and offset, except a
/// torn last record (never acknowledged), which is cut off and logged. With `repair`, everything before the
/// damage is kept: the damaged segment is cut at the damage and later segments are renamed `*.damaged`;
/// an unreadable snapshot is left out (its samples not in the log are lost, and said so). An intact record that
/// cannot be applied (a sample outside ``SupportedInstants`` logged by an older version, say) is quarantined: copied
/// to `quarantine/`, logged with its offset, and skipped, so it cannot stop every later start.
enum Recovery {
    static func run(
        directory: String, store: HealthStore, repair: Bool, log: (String) -> Void
    ) throws -> RecoveryReport {
        var report = RecoveryReport()
        let snapshots = SnapshotFiles(directory: directory + "/snapshots")
        var applied: [String: UInt64] = [:]
        do {
            report.manifest = try snapshots.readManifest()
        } catch let error as HealthError where repair {
            report.repairs.append("ignored the damaged manifest (\(error.message)); snapshot data is lost")
        }
        // Shards are independent: load and index their snapshots on every core.
        let entries = report.manifest?.entries ?? []
        let outcomes = ConditionLock([Int: Result<Int, any Error>]())
        DispatchQueue.concurrentPerform(iterations: entries.count) { index in
            let entry = entries[index]
            guard !entry.file.isEmpty else { return }
            let outcome = Result { () throws -> Int in
                let decoded = try snapshots.load(entry)
                try store.restore(decoded.image)
                return decoded.image.sampleCount
            }
            outcomes.withLock { $0[index] = outcome }
        }
        let loaded = outcomes.withLock { $0 }
        for (index, entry) in entries.enumerated() {
            switch loaded[index] {
            case nil:
                applied[entry.type] = entry.sequence
            case .success(let samples):
                report.snapshotSamples += samples
                applied[entry.type] = entry.sequence
            case .failure(let error):
                guard repair else { throw error }
                report.repairs.append("left out the snapshot of \(entry.type) (\(error)); its samples are lost")
            }
        }
        let walDirectory = directory + "/wal"
        let segments = try FileSystem.contentsOfDirectory(walDirectory).filter { $0.hasSuffix(".log") }
        var expected: UInt64? = nil
        if let manifest = report.manifest, !manifest.entries.isEmpty {
            expected = nil
            report.nextSequence = (manifest.entries.map(\.sequence).max() ?? 0) + 1
        }
        let lowestApplied = report.manifest?.entries.map(\.sequence).min() ?? 0
        for (index, name) in segments.enumerated() {
            let path = walDirectory + "/" + name
            let bytes = try FileSystem.readFile(path)
            let scan = LogFraming.scan(bytes)
            var damage = scan.damage
            if damage == nil || damage?.offset ?? 0 >= LogFraming.headerSize {
                let first = scan.firstSequence
                if let expected, first != expected {
                    damage = .corrupt(
                        offset: 0,
                        reason:
                            "segment starts at sequence \(first) where \(expected) was expected (a segment is missing)")
                } else if expected == nil, !repair, first > lowestApplied + 1 {
                    damage = .corrupt(
                        offset: 0,
                        reason:
                            "segment starts at sequence \(first) but the snapshots end at \(lowestApplied) (a segment is missing)"
                    )
                }
            }
            var replayed = 0
            for record in scan.records where damage.map({ record.offset < $0.offset }) ?? true {
                do {
                    try replay(record, store: store, applied: applied, report: &report)
                } catch {
                    // The record is intact (its CRC holds) but cannot be applied: it was never acknowledged (the
                    // insert that logged it failed), so keep it aside rather than stop every start on it.
                    try quarantine(record, segment: name, directory: directory, reason: error, log: log)
                    report.quarantinedRecords += 1
                }
                replayed += 1
            }
            let isLast = index == segments.count - 1
            if isLast, replayed == 0, damage == nil || damage?.offset ?? 0 < LogFraming.headerSize {
                // A segment started just before a stop or crash holds nothing: remove it (a new one replaces it).
                try FileSystem.remove(path)
                try FileSystem.syncDirectory(walDirectory)
                if let damage, bytes.count > 0 {
                    log("removed \(path): \(bytes.count) bytes of a torn segment header (offset \(damage.offset))")
                }
                continue
            }
            expected = scan.firstSequence + UInt64(replayed)
            report.nextSequence = max(report.nextSequence, scan.firstSequence + UInt64(replayed))
            guard let damage else { continue }
            let lost = bytes.count - damage.offset
            if case .tornTail = damage, isLast {
                try cut(path, at: damage.offset)
                report.tornBytes = lost
                log(
                    "cut off \(lost) bytes of a torn record at the end of \(path) (offset \(damage.offset)); it was never acknowledged"
                )
                continue
            }
            let reason: String
            switch damage {
            case .tornTail: reason = "truncated record"
            case .corrupt(_, let why): reason = why
            }
            guard repair else {
                throw HealthError(
                    .storageUnavailable,
                    "\(path): \(reason) at offset \(damage.offset) (\(lost) bytes from there on, \(segments.count - index - 1) later segments); "
                        + "start hkd with --repair to keep everything before it")
            }
            try cut(path, at: max(damage.offset, LogFraming.headerSize))
            var line = "cut \(path) at offset \(damage.offset) (\(reason)), dropping \(lost) bytes"
            for later in segments[(index + 1)...] {
                try FileSystem.rename(walDirectory + "/" + later, to: walDirectory + "/" + later + ".damaged")
                line += "; renamed \(later) to \(later).damaged"
            }
            try FileSystem.syncDirectory(walDirectory)
            report.repairs.append(line)
            break
        }
        for line in report.repairs { log("repair: " + line) }
        return report
    }

    private static func replay(
        _ record: LogFraming.Record, store: HealthStore, applied: [String: UInt64], report: inout RecoveryReport
    ) throws {
        let change = try LogChange.decode(kind: record.kind, payload: record.payload)
        let type = try QuantityType.named(change.type)
        if record.sequence <= applied[type.identifier] ?? 0 {
            report.skippedRecords += 1
            return
        }
        switch change {
        case .insert(let batch, let writer): _ = try store.insert(batch, writer: writer, beforeApplying: {})
        case .delete(let subject, let type, let filter):
            _ = try store.delete(subject: subject, type: type, filter: filter)
        case .sourcePriority(let subject, let type, let order):
            try store.setSourcePriority(subject: subject, type: type, order: order)
        }
        report.replayedRecords += 1
    }

    /// Writes an intact record that cannot be applied to `quarantine/<segment>@<offset>.record` (the record's
    /// bytes exactly as framed in the log), and logs why.
    private static func quarantine(
        _ record: LogFraming.Record, segment: String, directory: String, reason: any Error, log: (String) -> Void
    ) throws {
        let folder = directory + "/" + quarantineDirectory
        try FileSystem.makeDirectories(folder, permissions: 0o700)
        let path = folder + "/\(segment)@\(record.offset).record"
        let bytes = LogFraming.record(kind: record.kind, sequence: record.sequence, payload: record.payload)
        try FileSystem.writeFileAtomically(path, bytes, permissions: 0o600)
        log(
            "quarantined log record \(record.sequence) (wal/\(segment) offset \(record.offset)): it cannot be applied "
                + "(\(reason)); its bytes are kept in \(path) and start-up goes on without it")
    }

    /// Where records that cannot be applied are kept, relative to the data directory.
    static let quarantineDirectory = "quarantine"

    private static func cut(_ path: String, at offset: Int) throws {
        let file = try File(path: path, options: [.write])
        defer { file.close() }
        try file.truncate(to: Int64(offset))
        try file.sync()
    }
}
