import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthPosix
import Synchronization

/// How a ``DurableStore`` keeps its data.
public struct StorageConfiguration: Sendable {
    /// The data directory (holds `wal/` and `snapshots/`).
    public var directory: String
    public var fsync: FsyncPolicy
    /// Keep everything before damage instead of refusing to start (`hkd --repair`).
    public var repair: Bool
    /// Seconds between periodic snapshots (when the log grew); 0 turns them off.
    public var snapshotIntervalSeconds: Int
    /// Log bytes that trigger a snapshot before the interval is up; 0 turns the trigger off.
    public var snapshotLogBytes: Int64
    /// Opens log segments (tests inject failures).
    public var opener: any LogFileOpener
    /// Map the snapshot files at start-up and leave their sealed blocks there (cold), instead of copying them
    /// into memory (`hkd --memory-limit`).
    public var coldSnapshots = false

    /// A configuration; fsync always, snapshots every 10 minutes or 512 MiB of log.
    public init(
        directory: String, fsync: FsyncPolicy = .always, repair: Bool = false, snapshotIntervalSeconds: Int = 600,
        snapshotLogBytes: Int64 = 512 << 20, opener: any LogFileOpener = PosixLogFileOpener()
    ) {
        self.directory = directory
        self.fsync = fsync
        self.repair = repair
        self.snapshotIntervalSeconds = snapshotIntervalSeconds
        self.snapshotLogBytes = snapshotLogBytes
        self.opener = opener
    }
}

/// What a backup wrote.
public struct BackupReport: Sendable {
    /// The snapshot generation the backup starts from, and its samples.
    public var generation: UInt64
    public var samples: Int
    /// Files and bytes written.
    public var files = 0
    public var bytes: Int64 = 0

    /// Counts one more file of `fileBytes` bytes.
    public mutating func add(_ fileBytes: Int64) {
        files += 1
        bytes += fileBytes
    }
}

/// A snapshot just written.
public struct SnapshotReport: Sendable {
    public var generation: UInt64
    public var bytes: Int
    public var samples: Int
}

/// The store with its durability: every change is logged before it is applied and acknowledged only once the
/// log is as durable as the fsync policy promises; snapshots bound the log and the start-up time.
///
/// Thread-safe. `insert`, `delete` and `setSourcePriority` block until their record is durable: call them on
/// worker threads, never on an event loop. Queries go straight to ``store``.
public final class DurableStore: Sendable {
    /// The in-memory store; query it directly, change it only through this object.
    public let store: HealthStore
    /// What start-up found.
    public let recovery: RecoveryReport
    /// The local log (single-node mode); `nil` in memory and in cluster mode.
    private let log: WriteAheadLog?
    /// Where changes are logged: ``log``, or a cluster's log; `nil` in memory.
    private let changes: (any ChangeLog)?
    private let snapshots: SnapshotFiles?
    private let configuration: StorageConfiguration?
    /// The current manifest; its lock also serialises snapshots.
    private let current: ConditionLock<SnapshotManifest?>
    private let snapshotter = ConditionLock<(thread: PosixThread?, stopping: Bool)>((nil, false))
    private let logLine: @Sendable (String) -> Void

    /// A store without a log (tests, benchmarks): changes are applied and acknowledged at once.
    public init(inMemory store: HealthStore = HealthStore()) {
        self.store = store
        recovery = RecoveryReport()
        log = nil
        changes = nil
        snapshots = nil
        configuration = nil
        current = ConditionLock(nil)
        logLine = { _ in }
    }

    /// Recovers the data directory (snapshots, then the log after them) and starts logging, with a snapshot
    /// thread when ``StorageConfiguration/snapshotIntervalSeconds`` is set. Throws
    /// ``ErrorCode/storageUnavailable`` naming the file and offset of damage it will not repair. A full disk
    /// does not stop it: reads are served and changes fail retryably until space is freed.
    public init(_ configuration: StorageConfiguration, log logLine: @escaping @Sendable (String) -> Void) throws {
        let directory = configuration.directory
        do {
            try FileSystem.makeDirectories(directory + "/wal", permissions: 0o700)
            try FileSystem.makeDirectories(directory + "/snapshots", permissions: 0o700)
        } catch {
            throw storageError("cannot create the storage directories in \(directory)", error)
        }
        let store = HealthStore()
        let report: RecoveryReport
        do {
            report = try Recovery.run(
                directory: directory, store: store, repair: configuration.repair,
                coldBlocks: configuration.coldSnapshots, log: logLine)
        } catch {
            throw storageError("cannot recover \(directory)", error)
        }
        self.store = store
        recovery = report
        self.configuration = configuration
        self.logLine = logLine
        snapshots = SnapshotFiles(directory: directory + "/snapshots")
        current = ConditionLock(report.manifest)
        let log = try WriteAheadLog(
            directory: directory + "/wal", nextSequence: report.nextSequence, policy: configuration.fsync,
            opener: configuration.opener)
        self.log = log
        changes = log
        if log.isWaitingForSpace {
            logLine(
                "the disk holding \(directory) is full: serving reads; changes fail with the retryable "
                    + "storageUnavailable until space is freed")
        }
        if configuration.repair, !report.repairs.isEmpty {
            // What the repair kept becomes a snapshot generation at once, so that the next start (without
            // --repair) finds a manifest the log agrees with, even after a kill.
            do {
                if let taken = try snapshot() {
                    logLine("snapshot \(taken.generation) of what the repair kept: \(taken.samples) samples")
                }
            } catch {
                logLine("the snapshot after the repair failed (the next start may need --repair again): \(error)")
            }
        }
        if configuration.snapshotIntervalSeconds > 0 || configuration.snapshotLogBytes > 0 {
            let thread = try PosixThread.spawn(name: "hkd-snapshots") { [self] in snapshotLoop() }
            snapshotter.withLock { $0.thread = thread }
        }
    }

    /// A store that logs its changes to `changeLog` (cluster mode) and keeps no files: no snapshots, no
    /// backups. `store` holds what the log held when it was opened (the caller replayed it).
    public init(store: HealthStore, changeLog: any ChangeLog, log logLine: @escaping @Sendable (String) -> Void) {
        self.store = store
        recovery = RecoveryReport()
        log = nil
        changes = changeLog
        snapshots = nil
        configuration = nil
        current = ConditionLock(nil)
        self.logLine = logLine
    }

    // MARK: Changes

    /// Inserts a batch (see ``HealthStore/insert(_:beforeApplying:)``): logged, applied, then durable before
    /// this returns. With `encodedBatch` (the bytes the batch was decoded from) the log gets those bytes instead of
    /// an encoding made again. A re-sent batch also waits until what it duplicates is durable. New rows are marked as
    /// written by `writer` (a client identity's id; 0: unknown).
    public func insert(
        _ batch: SampleBatch, writer: UInt32 = 0, encodedBatch: ArraySlice<UInt8>? = nil
    ) throws -> InsertResult {
        guard let log = changes else { return try store.insert(batch, writer: writer, beforeApplying: {}) }
        let change = LogChange.insert(batch, writer: writer)
        let payload: [UInt8]
        if let encodedBatch {
            // The bytes that arrived, already decoded (and so valid): logged as they are.
            payload = LogChange.insertPayload(batch, writer: writer, encodedBatch: encodedBatch)
        } else {
            do {
                payload = try change.encodePayload()
            } catch let error as CodecError {
                throw error.healthError
            }
        }
        var sequence: UInt64?
        let append = {
            let appended = try log.append(kind: change.kind, payload: payload, subject: batch.subject)
            sequence = appended
            return appended
        }
        let result = try store.insert(batch, writer: writer, sequencedBy: append)
        try log.waitUntilDurable(sequence ?? log.lastSequence)
        return result
    }

    /// Deletes a subject's samples of a type matching `filter` (its ``SampleFilter/writer`` included); returns
    /// how many, once the deletion is durable.
    public func delete(subject: String, type: QuantityType, filter: SampleFilter) throws -> Int {
        try logged(
            .delete(subject: subject, type: type.identifier, filter: filter),
            sequenced: { hook in try store.delete(subject: subject, type: type, filter: filter, sequencedBy: hook) })
    }

    /// Sets a source priority order, durably.
    public func setSourcePriority(subject: String, type: QuantityType, order: [SourceInfo]) throws {
        try logged(.sourcePriority(subject: subject, type: type.identifier, order: order)) { hook in
            try store.setSourcePriority(subject: subject, type: type, order: order, beforeApplying: hook)
        }
    }

    // MARK: Workouts

    /// Adds workouts for `subject` (see ``WorkoutStore/insert(subject:_:writer:beforeApplying:)``): logged
    /// (record kind 5), applied, then durable before this returns.
    @discardableResult
    public func insertWorkouts(subject: String, _ workouts: [Workout], writer: UInt32 = 0) throws -> (
        inserted: Int, duplicates: Int
    ) {
        try insert(
            workouts, into: store.workouts, subject: subject, writer: writer,
            logging: .workouts(subject: subject, workouts, writer: writer))
    }

    /// Deletes `subject`'s workouts with these UUIDs (only `writer`'s when set); returns how many, once durable
    /// (record kind 6).
    public func deleteWorkouts(subject: String, uuids: [UUID], writer: UInt32? = nil) throws -> Int {
        try logged(
            .workoutDelete(subject: subject, uuids: uuids.sorted { $0.uuidString < $1.uuidString }, writer: writer),
            sequenced: { hook in
                try store.workouts.delete(subject: subject, uuids: Set(uuids), writer: writer, sequencedBy: hook)
            })
    }

    /// Runs `change`, which calls the hook it is given under its lock once its checks passed: the hook appends
    /// `record` to the log. Returns once the record (or what a no-op change duplicates) is durable.
    func logged<T>(_ record: LogChange, _ change: (() throws -> Void) throws -> T) throws -> T {
        try logged(
            record,
            sequenced: { hook in
                try withoutActuallyEscaping(hook) { hook in try change { _ = try hook() } }
            })
    }

    /// ``logged(_:_:)`` whose hook returns the sequence the log gave `record` (0 without a log).
    func logged<T>(_ record: LogChange, sequenced change: (() throws -> UInt64) throws -> T) throws -> T {
        guard let log = changes else { return try change({ 0 }) }
        let payload: [UInt8]
        do {
            payload = try record.encodePayload()
        } catch let error as CodecError {
            throw error.healthError
        }
        var sequence: UInt64?
        let result = try change {
            let appended = try log.append(kind: record.kind, payload: payload, subject: record.subject)
            sequence = appended
            return appended
        }
        try log.waitUntilDurable(sequence ?? log.lastSequence)
        return result
    }

    // MARK: Snapshots

    /// Writes a snapshot of every shard, then drops the log segments it makes unnecessary. Returns `nil`
    /// without a log. Blocks (reading shards under their read locks only briefly).
    @discardableResult
    public func snapshot() throws -> SnapshotReport? {
        guard let log, let snapshots else { return nil }
        let started = Deadline.now()
        defer {
            snapshotDurations.observeSince(started)
            lastSnapshot.withLock { $0 = ContinuousClock.now }
        }
        return try current.withLock { manifest in
            let first = try log.rotate()
            let generation = (manifest?.generation ?? 0) + 1
            let (written, bytes, samples) = try snapshots.write(
                generation: generation, images: { type in store.image(of: type) { log.lastSequence } },
                keptApart: { SnapshotPart.keptApart(of: store) { log.lastSequence } },
                placeExtras: { type, placements, memory in store.placeListedNames(of: type, placements, in: memory) })
            manifest = written
            try snapshots.removeUnlisted(keeping: written)
            let walDirectory = log.directory
            for name in try FileSystem.contentsOfDirectory(walDirectory) where name.hasSuffix(".log") {
                guard let segmentFirst = UInt64(name.dropLast(4), radix: 16), segmentFirst < first else { continue }
                try FileSystem.remove(walDirectory + "/" + name)
            }
            try FileSystem.syncDirectory(walDirectory)
            return SnapshotReport(generation: generation, bytes: bytes, samples: samples)
        }
    }

    // MARK: Backups

    /// A consistent online backup into `target`, taken while changes go on: a snapshot of every shard, the
    /// manifest, the log segments after the snapshot through the last record written when the copy starts, a
    /// durable mark for that record, the data directory's files named in `including` that exist
    /// (`identities.json`, say), and last `backup.json` (``BackupManifest``: every file's size and CRC-32, the
    /// snapshot's samples and the log's last sequence), which start-up checks. Every change acknowledged before
    /// the backup started is in it. `target` is a data directory: start hkd on it (or on a copy) to restore.
    /// Snapshots wait while the backup copies.
    ///
    /// `target` is checked before anything is written (``BackupTarget``: absolute, an existing parent reached
    /// without symbolic links, absent or empty, outside the data directory); a refusal is the non-retryable
    /// ``ErrorCode/invalidArgument``. Throws ``ErrorCode/storageUnavailable`` naming the file that could not be
    /// written or read.
    public func backup(to target: String, including: [String] = []) throws -> BackupReport {
        guard let log, let snapshots, let configuration else {
            throw HealthError(.unsupportedRequest, "this store keeps no files to back up")
        }
        let checked = try BackupTarget(target, dataDirectory: configuration.directory)
        guard let taken = try snapshot() else {
            throw HealthError(.internalError, "the backup's snapshot was not taken")
        }
        do {
            return try current.withLock { manifest in
                var writer = try BackupWriter(checked)
                for entry in manifest?.entries ?? [] where !entry.file.isEmpty {
                    try writer.copy(snapshots.directory + "/" + entry.file, as: "snapshots/" + entry.file)
                }
                try writer.copy(
                    snapshots.directory + "/" + SnapshotFiles.manifestName,
                    as: "snapshots/" + SnapshotFiles.manifestName)
                // Every record through `last` is written whole (appends are single writes under the log's lock);
                // later ones may be half-copied, and are left out.
                let last = log.lastSequence
                try copySegments(of: log, through: last, into: &writer)
                try writer.write(DurableMark.encode(last), as: "wal/" + DurableMarkFile.name)
                for name in including where try FileSystem.exists(configuration.directory + "/" + name) {
                    try writer.copy(configuration.directory + "/" + name, as: name)
                }
                let manifestBytes = try writer.finish(
                    generation: taken.generation, samples: taken.samples, lastSequence: last)
                var report = BackupReport(generation: taken.generation, samples: taken.samples)
                for file in writer.files { report.add(Int64(file.size)) }
                report.add(Int64(manifestBytes))
                return report
            }
        } catch let error as HealthError {
            throw error
        } catch {
            throw storageError("cannot write the backup into \(checked.path)", error)
        }
    }

    /// Copies the log's segments into the backup, each up to its last record at or below `last`, and checks that
    /// the copy reaches `last` without a gap (else the backup would come up short: it fails instead).
    private func copySegments(of log: WriteAheadLog, through last: UInt64, into writer: inout BackupWriter) throws {
        var expected: UInt64?
        for name in try FileSystem.contentsOfDirectory(log.directory) where name.hasSuffix(".log") {
            let path = log.directory + "/" + name
            let bytes = try FileSystem.readFile(path)
            let scan = LogFraming.scan(bytes)
            guard bytes.count >= LogFraming.headerSize, scan.firstSequence <= last + 1 else { continue }
            let intact = scan.records.prefix { record in
                record.sequence <= last && scan.damage.map { record.offset < $0.offset } ?? true
            }
            if let expected, scan.firstSequence != expected {
                throw HealthError(
                    .storageUnavailable,
                    "cannot back up the log: \(path) starts at sequence \(scan.firstSequence) where \(expected) was expected"
                )
            }
            expected = scan.firstSequence + UInt64(intact.count)
            let end = intact.last.map { $0.payloadRange.upperBound } ?? LogFraming.headerSize
            try writer.write(Array(bytes[..<end]), as: "wal/" + name)
        }
        if let expected, expected != last + 1 {
            throw HealthError(
                .storageUnavailable,
                "cannot back up the log: it holds records through \(expected - 1), but \(last) were written "
                    + "(damage in \(log.directory))")
        }
    }

    /// The data directory; `nil` for a store without files.
    public var directory: String? { configuration?.directory }

    /// Bytes appended to the log since start-up.
    public var logBytesWritten: Int64 { log?.bytesWritten ?? 0 }
    /// The log's fsync latencies and group-commit sizes; `nil` without a log.
    public var logStatistics: (fsyncs: Histogram, recordsPerFsync: Histogram)? {
        log.map { ($0.fsyncDurations, $0.recordsPerFsync) }
    }
    /// Whether a change could be logged now (see ``WriteAheadLog/acceptsChanges``); true without a log.
    public var acceptsChanges: Bool { log?.acceptsChanges ?? true }
    /// How long each snapshot took, in seconds.
    public let snapshotDurations = Histogram(bounds: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300])
    /// When the last snapshot finished (or start-up, before the first).
    public let lastSnapshot = Mutex(ContinuousClock.now)

    /// Stops the snapshot thread, writes a final snapshot (when `snapshot`) and closes the log. Idempotent.
    public func close(snapshot takeSnapshot: Bool = true) {
        let thread = snapshotter.update { state in
            state.stopping = true
            defer { state.thread = nil }
            return state.thread
        }
        thread?.join()
        guard let log else { return }
        if takeSnapshot {
            do {
                if let report = try snapshot() {
                    logLine("snapshot \(report.generation): \(report.samples) samples in \(report.bytes) bytes")
                }
            } catch {
                logLine("final snapshot failed (the log keeps everything): \(error)")
            }
        }
        log.close()
    }

    private func snapshotLoop() {
        guard let configuration, let log else { return }
        var lastSnapshotBytes = log.bytesWritten
        var lastSnapshotTime = ContinuousClock.now
        while true {
            let stopping = snapshotter.wait(until: .after(.seconds(1))) { $0.stopping ? true : nil } ?? false
            if stopping { return }
            let grown = log.bytesWritten - lastSnapshotBytes
            let due =
                (configuration.snapshotLogBytes > 0 && grown >= configuration.snapshotLogBytes)
                || (configuration.snapshotIntervalSeconds > 0 && grown > 0
                    && ContinuousClock.now - lastSnapshotTime >= .seconds(configuration.snapshotIntervalSeconds))
            guard due else { continue }
            lastSnapshotBytes = log.bytesWritten
            lastSnapshotTime = ContinuousClock.now
            do {
                if let report = try snapshot() {
                    logLine("snapshot \(report.generation): \(report.samples) samples in \(report.bytes) bytes")
                }
            } catch {
                logLine("snapshot failed (the log keeps everything): \(error)")
            }
        }
    }
}
