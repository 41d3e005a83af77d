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
    /// Inserted samples in log records `--repair` could read but not keep (those of unreadable bytes, missing
    /// segments and left-out snapshots are not counted; ``repairs`` says so).
    public var lostSamples = 0
    /// The sequence number the next record gets.
    public var nextSequence: UInt64 = 1
    /// The snapshot generation loaded, if any.
    public var manifest: SnapshotManifest?
}

/// Start-up: checks a backup's files against its `backup.json` when there is one, removes temporaries of
/// unfinished snapshots, loads the snapshots named by the manifest, replays the log records after them
/// (``LogRecovery``), then sets aside snapshot files no manifest names (an unfinished snapshot's).
///
/// Damage stops start-up with a ``ErrorCode/storageUnavailable`` error naming the file, the offset and
/// `--repair`. With `repair`, everything before the damage is kept and everything given up is set aside as
/// `*.damaged`: a damaged or missing manifest, a snapshot that cannot be read, the damaged part of the log.
/// An intact record that cannot be applied (a sample outside ``SupportedInstants`` logged by an older version,
/// say) is quarantined: copied to `quarantine/`, logged with its offset, and skipped, so it cannot stop every
/// later start.
enum Recovery {
    /// Where records that cannot be applied are kept, relative to the data directory.
    static let quarantineDirectory = "quarantine"

    /// The snapshot files are mapped and their element extras read from there (in the page cache); with
    /// `coldBlocks`, their sealed blocks too instead of copied into memory (`hkd --memory-limit`).
    static func run(
        directory: String, store: HealthStore, repair: Bool, coldBlocks: Bool = false, log: (String) -> Void
    ) throws -> RecoveryReport {
        var report = RecoveryReport()
        let backup = try checkBackup(directory, repair: repair, report: &report)
        let snapshots = SnapshotFiles(directory: directory + "/snapshots")
        let walDirectory = directory + "/wal"
        for name in try FileSystem.removeAtomicWriteLeftovers(in: snapshots.directory) {
            log("removed \(snapshots.directory)/\(name), left by a snapshot that did not finish")
        }
        let segments = try FileSystem.contentsOfDirectory(walDirectory).filter { $0.hasSuffix(".log") }
        let firstLogged = segments.first.flatMap { name in
            UInt64(name.dropLast(4), radix: 16).map { (walDirectory + "/" + name, $0) }
        }
        report.manifest = try manifest(snapshots, firstLogged: firstLogged, repair: repair, report: &report)
        let applied = try loadSnapshots(snapshots, into: store, repair: repair, cold: coldBlocks, report: &report)
        if let manifest = report.manifest, !manifest.entries.isEmpty {
            report.nextSequence = (manifest.entries.map(\.sequence).max() ?? 0) + 1
        }
        try LogRecovery(
            walDirectory: walDirectory, store: store, applied: applied,
            lowestApplied: report.manifest?.entries.map(\.sequence).min() ?? 0, repair: repair,
            quarantineDirectory: directory + "/" + quarantineDirectory
        ).run(&report, log: log)
        // Only once the log is judged whole: a refused start changes nothing here.
        try setAsideUnfinished(snapshots, keeping: report.manifest, log: log)
        if let backup { try startedFromBackup(backup, directory: directory, repair: repair, report: &report, log: log) }
        for line in report.repairs { log("repair: " + line) }
        return report
    }

    /// A data directory that is a backup (or a copy of one) holds `backup.json`: every file it lists must be there
    /// as the backup wrote it. Anything else stops start-up naming each file, or with `repair` is reported and
    /// start-up goes on from what is there. Returns the manifest, nil when there is none.
    private static func checkBackup(_ directory: String, repair: Bool, report: inout RecoveryReport) throws
        -> BackupManifest?
    {
        guard let (manifest, problems) = try BackupCheck.run(directory) else { return nil }
        guard !problems.isEmpty else { return manifest }
        let summary = BackupCheck.describe(problems, in: directory)
        guard repair else {
            throw HealthError(
                .storageUnavailable,
                summary + ". Restore an intact copy of the backup, or start hkd with --repair to start from what "
                    + "is there (what it cannot keep is reported)")
        }
        report.repairs.append(summary + "; started from what is there")
        return manifest
    }

    /// After a start from a backup: checks that the snapshot's samples and the log's last sequence are what the
    /// backup held (stops start-up otherwise, or with `repair` reports the shortfall), then removes
    /// `backup.json`: from here on the directory changes as any data directory does.
    private static func startedFromBackup(
        _ backup: BackupManifest, directory: String, repair: Bool, report: inout RecoveryReport,
        log: (String) -> Void
    ) throws {
        let reached = report.nextSequence - 1
        if reached < backup.lastSequence || report.snapshotSamples < Int(clamping: backup.samples) {
            let short =
                "\(directory)/\(BackupManifest.fileName): the backup held \(backup.samples) samples in its snapshot and "
                + "the log through sequence \(backup.lastSequence); start-up found \(report.snapshotSamples) and "
                + "sequence \(reached)"
            guard repair else {
                throw HealthError(.storageUnavailable, short + ": restore an intact copy of the backup")
            }
            report.repairs.append(short)
        }
        let path = directory + "/" + BackupManifest.fileName
        try FileSystem.remove(path)
        try FileSystem.syncDirectory(directory)
        log(
            "started from the backup in \(directory): checked its \(backup.files.count) files against \(path) "
                + "(snapshot generation \(backup.generation), \(backup.samples) samples, the log through sequence "
                + "\(backup.lastSequence)), then removed it")
    }

    /// The current manifest. A missing one is fine when the log starts at sequence 1 (it holds every record, so
    /// snapshot files there are what a first snapshot that did not finish left: ``setAsideUnfinished``), or
    /// when nothing shows there was one (no snapshot files, no log or one that starts at sequence 1). Otherwise
    /// (and for a damaged one) start-up stops, or with `repair` the manifest and snapshot files are set aside and
    /// start-up goes on from the log alone.
    private static func manifest(
        _ snapshots: SnapshotFiles, firstLogged: (path: String, sequence: UInt64)?, repair: Bool,
        report: inout RecoveryReport
    ) throws -> SnapshotManifest? {
        let path = snapshots.manifestPath
        let damaged: HealthError?
        do {
            if let manifest = try snapshots.readManifest() { return manifest }
            damaged = nil
        } catch let error as HealthError {
            damaged = error
        }
        let evidence: String
        if let damaged {
            guard repair else {
                throw HealthError(
                    damaged.code,
                    damaged.message + "; restore it from a backup, or start hkd with --repair to start from the log "
                        + "alone (the snapshot files are kept as *.damaged)")
            }
            evidence = "it is damaged (\(damaged.message))"
        } else {
            let files = try snapshots.snapshotFiles()
            if firstLogged?.sequence == 1 {
                return nil
            } else if let file = files.first {
                evidence = "it is missing but \(files.count) snapshot files are there (\(snapshots.directory)/\(file))"
            } else if let firstLogged, firstLogged.sequence > 1 {
                evidence =
                    "it is missing but the log (\(firstLogged.path)) starts at sequence \(firstLogged.sequence): the records before it "
                    + "were in a snapshot, or the segments holding them are missing"
            } else {
                return nil
            }
            guard repair else {
                throw HealthError(
                    .storageUnavailable,
                    "\(path): \(evidence): starting without it would lose the snapshot's samples. "
                        + "Restore it from a backup, or start hkd with --repair to start from the log alone "
                        + "(the snapshot files are kept as *.damaged)")
            }
        }
        var line = "\(path): \(evidence); started from the log alone"
        if try FileSystem.exists(path) { line += ", kept the manifest as \(try DamagedCopies.setAside(path))" }
        for file in try snapshots.snapshotFiles() {
            line += ", kept \(file) as \(try DamagedCopies.setAside(snapshots.directory + "/" + file))"
        }
        report.repairs.append(line + "; the snapshots' samples are lost")
        return nil
    }

    /// Sets aside (as `NAME.unfinished`, replacing an older one) every snapshot file `manifest` does not name:
    /// a snapshot writes its files before the manifest that makes them count, so such a file is what a snapshot
    /// that did not finish left, and the log still holds its records (segments go only once a manifest covers
    /// them). The next snapshot removes them (``SnapshotFiles/removeUnlisted(keeping:)``).
    private static func setAsideUnfinished(
        _ snapshots: SnapshotFiles, keeping manifest: SnapshotManifest?, log: (String) -> Void
    ) throws {
        let named = Set(manifest?.entries.map(\.file) ?? [])
        let unfinished = try snapshots.snapshotFiles().filter { !named.contains($0) }
        for name in unfinished {
            let path = snapshots.directory + "/" + name
            try FileSystem.rename(path, to: path + SnapshotFiles.unfinishedSuffix)
            log(
                "set aside \(path) as \(name)\(SnapshotFiles.unfinishedSuffix): no \(SnapshotFiles.manifestName) names it, "
                    + "so a snapshot that did not finish left it; the log holds its records")
        }
        if !unfinished.isEmpty { try FileSystem.syncDirectory(snapshots.directory) }
    }

    /// Loads every snapshot the manifest names, on every core; returns each type's snapshot sequence. With
    /// `repair` a snapshot that cannot be read is set aside as `.damaged` and left out.
    private static func loadSnapshots(
        _ snapshots: SnapshotFiles, into store: HealthStore, repair: Bool, cold: Bool, report: inout RecoveryReport
    ) throws -> [String: UInt64] {
        var applied: [String: UInt64] = [:]
        let entries = report.manifest?.entries ?? []
        let outcomes = ConditionLock([Int: Result<Int, any Error>]())
        DispatchQueue.concurrentPerform(iterations: entries.count) { index in
            let entry = entries[index]
            guard !entry.file.isEmpty else { return }
            let outcome = Result { () throws -> Int in
                // Mapped whatever `cold` says: element extras are read from the file (the next snapshot moves them
                // to its own), blocks only when cold.
                try snapshots.decode(entry, mapping: true) { bytes, memory in
                    try SnapshotPart(type: entry.type, sequence: entry.sequence, bytes: bytes).restore(
                        into: store, blocksIn: cold ? memory : nil, extrasIn: memory)
                }
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
                guard repair else {
                    let message = (error as? HealthError)?.message ?? "\(error)"
                    throw HealthError(
                        .storageUnavailable,
                        message + "; restore it from a backup, or start hkd with --repair to start without it "
                            + "(its samples not in the log are lost)")
                }
                var line = "left out the snapshot of \(entry.type) (\(error))"
                let path = snapshots.directory + "/" + entry.file
                if try FileSystem.exists(path) { line += ", kept as \(try DamagedCopies.setAside(path))" }
                report.repairs.append(line + "; its samples are lost")
            }
        }
        return applied
    }

    static func replay(
        _ record: LogFraming.Record, store: HealthStore, applied: [String: UInt64], report: inout RecoveryReport
    ) throws {
        let change = try LogChange.decode(kind: record.kind, from: record.payloadReader)
        let type = try storeKey(change.type)
        if record.sequence <= applied[type] ?? 0 {
            report.skippedRecords += 1
            return
        }
        // Changes that hand out anchors take the record's sequence (a store deriving anchors from sequences uses it;
        // others ignore it).
        let sequence = { record.sequence }
        switch change {
        case .insert(let batch, let writer): _ = try store.insert(batch, writer: writer, sequencedBy: sequence)
        case .delete(let subject, let type, let filter):
            _ = try store.delete(
                subject: subject, type: try QuantityType.named(type), filter: filter, sequencedBy: sequence)
        case .sourcePriority(let subject, let type, let order):
            try store.setSourcePriority(subject: subject, type: try QuantityType.named(type), order: order)
        case .workouts(let subject, let workouts, let writer):
            try store.workouts.insert(subject: subject, workouts, writer: writer, sequencedBy: sequence)
        case .workoutDelete(let subject, let uuids, let writer):
            try store.workouts.delete(subject: subject, uuids: Set(uuids), writer: writer, sequencedBy: sequence)
        case .characteristics(let subject, let entries):
            try store.setCharacteristics(subject: subject, try entries.map { try $0.checked() })
        case .activitySummaries(let subject, let summaries):
            try store.insertActivitySummaries(subject: subject, summaries)
        case .correlations(let subject, let correlations, let writer):
            try store.correlations.insert(subject: subject, correlations, writer: writer, sequencedBy: sequence)
        case .correlationDelete(let subject, let uuids, let writer):
            try store.correlations.delete(subject: subject, uuids: Set(uuids), writer: writer, sequencedBy: sequence)
        case .routes(let subject, let routes, let writer):
            try store.routes.insert(subject: subject, routes, writer: writer, sequencedBy: sequence)
        }
        report.replayedRecords += 1
    }

    /// The store a change of type `type` goes to, by the identifier its snapshot has in the manifest: a quantity
    /// or category type's, `workout`, or the name of a store kept apart. Throws for a type that does not exist.
    static func storeKey(_ type: String) throws -> String {
        if WorkoutType.matches(type) { return WorkoutType.identifier }
        if [Correlation.storageType, WorkoutRoute.storageType].contains(type) { return type }
        return try ProfileType.named(type)?.identifier ?? QuantityType.named(type).identifier
    }

    /// Cuts the file at `path` to `offset` bytes, durably.
    static func cut(_ path: String, at offset: Int) throws {
        let file = try File(path: path, options: [.write])
        defer { file.close() }
        try file.truncate(to: Int64(offset))
        try file.sync()
    }

    /// fsyncs the file at `path` (a segment a crashed server may have left unsynced), so that what recovery
    /// kept is durable before the durable mark says so.
    static func sync(_ path: String) throws {
        let file = try File(path: path, options: [.write])
        defer { file.close() }
        try file.syncData()
    }
}
