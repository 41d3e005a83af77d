import Foundation
import HealthModel
import HealthPosix

/// When the write-ahead log reaches stable storage, and so what an acknowledgement promises.
public enum FsyncPolicy: String, Sendable, CaseIterable {
    /// Every acknowledged change is fsynced first (concurrent changes share one fsync): survives power loss.
    case always
    /// fsync about once a second: survives a crash of hkd; a power loss may lose the last second.
    case interval
    /// fsync only when a segment is closed and at snapshots: survives a crash of hkd, not a power loss.
    case never
}

/// The write-ahead log: numbered records appended to segment files in `directory`, with group commit.
///
/// `append` writes a record (one `write`, under the log's lock, so records get consecutive sequence numbers in
/// the order they are written) and returns its sequence number; `waitUntilDurable` blocks until a commit thread
/// has fsynced through it. Records appended while an fsync runs share the next one. A failed write is cut off
/// again and reported as a retryable ``ErrorCode/storageUnavailable``; a failed fsync poisons the log (the
/// kernel may have dropped the unsynced pages), so every later call fails until hkd restarts.
///
/// When the disk is full at start-up no segment can be created: the log starts without one, and every `append`
/// tries again, failing with the retryable ``ErrorCode/storageUnavailable`` until space is freed (the server
/// serves reads meanwhile). After every fsync the log records the durable sequence in `DURABLE`
/// (``DurableMarkFile``, created durably when the log opens, or once space is back), which start-up checks the
/// segments against.
/// Thread-safe; `append` and `waitUntilDurable` block, so call them on worker threads only.
public final class WriteAheadLog: Sendable {
    struct State {
        /// The current segment; `nil` while none could be created (a full disk).
        var file: (any LogFile)?
        var fileSize: Int64
        var segmentFirstSequence: UInt64
        var nextSequence: UInt64
        var synced: UInt64
        var syncing = false
        var failure: HealthError?
        var stopping = false
        var bytesWritten: Int64 = 0
        var mark: File?
        var appended: UInt64 { nextSequence - 1 }
    }

    /// The directory holding the segments.
    public let directory: String
    public let policy: FsyncPolicy
    private let opener: any LogFileOpener
    private let state: ConditionLock<State>
    private let committer = ConditionLock<PosixThread?>(nil)

    /// The file name of the segment whose first record has sequence `first`: 16 hex digits and `.log`.
    public static func segmentName(first: UInt64) -> String {
        let hex = String(first, radix: 16)
        return String(repeating: "0", count: max(0, 16 - hex.count)) + hex + ".log"
    }

    /// Starts a new segment for records from `nextSequence` on and the commit thread; records `nextSequence - 1`
    /// as durable (everything before it is on disk already). On a full disk it starts without a segment (see
    /// ``isWaitingForSpace``); any other failure to create one throws.
    public init(
        directory: String, nextSequence: UInt64, policy: FsyncPolicy = .always,
        opener: any LogFileOpener = PosixLogFileOpener()
    ) throws {
        self.directory = directory
        self.policy = policy
        self.opener = opener
        var file: (any LogFile)?
        do {
            file = try WriteAheadLog.createSegment(directory, first: nextSequence, opener)
        } catch  where error.diskFull {
            file = nil
        } catch {
            throw error.reported
        }
        let mark = DurableMarkFile.open(directory, recording: nextSequence - 1)
        state = ConditionLock(
            State(
                file: file, fileSize: Int64(LogFraming.headerSize), segmentFirstSequence: nextSequence,
                nextSequence: nextSequence, synced: nextSequence - 1, mark: mark))
        let thread = try PosixThread.spawn(name: "hkd-wal-commit") { [self] in commitLoop() }
        committer.withLock { $0 = thread }
    }

    /// Why a segment could not be created: the error to report, and whether the disk is full.
    struct SegmentCreationError: Error {
        var reported: HealthError
        var diskFull: Bool
    }

    /// Creates segment `first` with its header, fsynced; throws ``SegmentCreationError``.
    private static func createSegment(_ directory: String, first: UInt64, _ opener: any LogFileOpener)
        throws(SegmentCreationError) -> any LogFile
    {
        let path = directory + "/" + segmentName(first: first)
        do {
            let file = try opener.create(path)
            do {
                try file.append(LogFraming.segmentHeader(firstSequence: first))
                try file.syncData()
                try FileSystem.syncDirectory(directory)
            } catch {
                file.close()
                try? FileSystem.remove(path)
                throw error
            }
            return file
        } catch {
            if let system = error as? SystemError, system.code == ENOSPC || system.code == EDQUOT {
                let reported = HealthError(
                    .storageUnavailable,
                    "the disk is full: cannot start log segment \(path) (\(system)); "
                        + "hkd serves reads and refuses changes until space is freed")
                throw SegmentCreationError(reported: reported, diskFull: true)
            }
            throw SegmentCreationError(
                reported: storageError("cannot start log segment \(path)", error), diskFull: false)
        }
    }

    /// Whether the log has no segment because the disk was full; the next `append` tries again.
    public var isWaitingForSpace: Bool { state.withLock { $0.file == nil } }

    /// Whether a change could be logged now: no failed fsync poisons the log and it is not waiting for space.
    public var acceptsChanges: Bool { state.withLock { $0.failure == nil && $0.file != nil } }

    /// The sequence number of the last record appended (the first one's minus one when none was).
    public var lastSequence: UInt64 { state.withLock { $0.appended } }

    /// Bytes appended since the log was opened.
    public var bytesWritten: Int64 { state.withLock { $0.bytesWritten } }
    /// How long each fsync of the commit thread took, in seconds.
    public let fsyncDurations = Histogram(bounds: Histogram.latencyBounds)
    /// How many records each fsync made durable (group commit).
    public let recordsPerFsync = Histogram(bounds: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])

    /// Appends one record and returns its sequence number; throws ``ErrorCode/storageUnavailable`` (nothing
    /// written) when the write fails or the log is poisoned.
    public func append(kind: LogRecordKind, payload: [UInt8]) throws -> UInt64 {
        try state.update { s in
            if let failure = s.failure { throw failure }
            let file: any LogFile
            if let current = s.file {
                file = current
            } else {
                do {
                    file = try WriteAheadLog.createSegment(directory, first: s.nextSequence, opener)
                } catch let error as SegmentCreationError {
                    throw error.reported
                }
                (s.file, s.fileSize, s.segmentFirstSequence) = (file, Int64(LogFraming.headerSize), s.nextSequence)
                // Space is back: the mark a full disk kept from being written too.
                if s.mark == nil { s.mark = DurableMarkFile.open(directory, recording: s.synced) }
            }
            let sequence = s.nextSequence
            let record = LogFraming.record(kind: kind.rawValue, sequence: sequence, payload: payload)
            do {
                try file.append(record)
            } catch {
                let reported = storageError("cannot append to the write-ahead log", error)
                do {
                    try file.truncate(to: s.fileSize)
                } catch {
                    s.failure = HealthError(
                        .storageUnavailable,
                        "the write-ahead log cannot cut off a failed write (\(error)); restart hkd")
                }
                throw reported
            }
            s.fileSize += Int64(record.count)
            s.bytesWritten += Int64(record.count)
            s.nextSequence += 1
            return sequence
        }
    }

    /// Returns once record `sequence` is as durable as the policy promises: fsynced with ``FsyncPolicy/always``,
    /// written otherwise. Throws ``ErrorCode/storageUnavailable`` when the log is poisoned.
    public func waitUntilDurable(_ sequence: UInt64) throws {
        if policy != .always {
            if let failure = state.withLock({ $0.failure }) { throw failure }
            return
        }
        _ = try state.wait { s -> Bool? in
            if s.synced >= sequence { return true }
            if let failure = s.failure { throw failure }
            if s.stopping { throw HealthError(.shuttingDown, "the write-ahead log is closing") }
            return nil
        }
    }

    /// Closes the current segment (fsynced) and starts the next; returns the first sequence number of the new
    /// segment. Every record before it lies in older segments.
    @discardableResult
    public func rotate() throws -> UInt64 {
        // The fsync here makes waiting appends durable (and may poison the log): wake their waiters.
        try state.waitThenUpdate { s -> UInt64? in
            if s.syncing { return nil }
            if let failure = s.failure { throw failure }
            // An empty segment (or none) already starts at the next sequence: nothing to close.
            guard let file = s.file, s.segmentFirstSequence != s.nextSequence else { return s.nextSequence }
            do {
                try file.syncData()
            } catch {
                s.failure = storageError("cannot sync the write-ahead log", error)
                throw s.failure!
            }
            s.markSynced(s.appended)
            let next: any LogFile
            do {
                next = try WriteAheadLog.createSegment(directory, first: s.nextSequence, opener)
            } catch let error as SegmentCreationError {
                throw error.reported
            }
            file.close()
            s.file = next
            s.fileSize = Int64(LogFraming.headerSize)
            s.segmentFirstSequence = s.nextSequence
            return s.nextSequence
        }!
    }

    /// Syncs what is left, stops the commit thread and closes the segment. Idempotent.
    public func close() {
        state.update { $0.stopping = true }
        let thread = committer.withLock { thread in
            defer { thread = nil }
            return thread
        }
        thread?.join()
        state.withLock { s in
            if s.failure == nil, let file = s.file, (try? file.syncData()) != nil { s.markSynced(s.appended) }
            s.file?.close()
            s.mark?.close()
            if s.failure == nil { s.failure = HealthError(.shuttingDown, "the write-ahead log is closed") }
        }
    }

    /// The commit thread: fsyncs whatever was appended since the last fsync (at once with ``FsyncPolicy/always``,
    /// each second with ``FsyncPolicy/interval``), then wakes the waiters; a final fsync when the log closes.
    private func commitLoop() {
        let period: Duration = .seconds(1)
        var stop = false
        while !stop {
            let deadline: Deadline = policy == .always ? .distantFuture : .after(period)
            let job = state.wait(until: deadline) { s -> (file: (any LogFile)?, target: UInt64, stop: Bool)? in
                let pending = s.failure == nil && s.appended > s.synced
                guard s.stopping || (pending && policy == .always) else { return nil }
                s.syncing = pending
                return (s.file, s.appended, s.stopping)
            }
            // With the interval policy the wait times out each period: sync whatever is pending then.
            let timed = job == nil && policy == .interval
            guard
                let job = job
                    ?? (timed
                        ? state.withLock { s in
                            s.syncing = s.failure == nil && s.appended > s.synced
                            return (s.file, s.appended, false)
                        } : nil)
            else { continue }
            stop = job.stop
            let previouslySynced = state.withLock { $0.synced }
            guard let file = job.file, job.target > previouslySynced else {
                // Nothing to sync after all: a rotation waiting for this commit must not wait for ever.
                state.update { $0.syncing = false }
                continue
            }
            var failure: HealthError?
            let started = Deadline.now()
            do { try file.syncData() } catch { failure = storageError("cannot sync the write-ahead log", error) }
            fsyncDurations.observeSince(started)
            recordsPerFsync.observe(Double(job.target - previouslySynced))
            state.update { s in
                s.syncing = false
                if let failure {
                    s.failure = s.failure ?? HealthError(failure.code, failure.message + "; restart hkd")
                } else {
                    s.markSynced(max(s.synced, job.target))
                }
            }
        }
    }
}

extension WriteAheadLog.State {
    /// Everything through `sequence` is fsynced: wake the waiters' condition and record it in the durable mark.
    mutating func markSynced(_ sequence: UInt64) {
        synced = sequence
        DurableMarkFile.write(sequence, to: mark)
    }
}
