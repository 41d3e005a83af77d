import Dispatch
import HealthCodec
import HealthEngine
import HealthModel
import HealthPosix
import Synchronization

/// Start-up's pass over the log segments (Protocol/STORAGE.md, *Start-up*): replays every record after the
/// snapshots, then judges the damage found, changing nothing on disk before the whole log has been judged.
///
/// Dropped without `--repair`, and logged, only what provably was never acknowledged: a torn last record with
/// no valid record after it, or a torn header of the last segment, and only when the durable mark
/// (`wal/DURABLE`) is there and the log still reaches it. Everything else refuses naming the file and offset
/// (a missing or damaged mark where a torn end would be dropped included); with `repair` the damaged segment is
/// cut there (its original kept as `.damaged`), later segments are renamed `.damaged`, and the report says how
/// many samples could not be kept. A missing or damaged mark over a log that ends cleanly is logged, not refused
/// (data directories of releases before the mark have none).
struct LogRecovery {
    let walDirectory: String
    let store: HealthStore
    /// Each type's snapshot sequence: its records up to there are in the snapshot.
    let applied: [String: UInt64]
    /// The lowest snapshot sequence of the manifest (0 without one): the log must start right after it.
    let lowestApplied: UInt64
    let repair: Bool
    /// Where intact records that cannot be applied are kept.
    let quarantineDirectory: String

    /// Damage that refuses start-up (or that `--repair` cuts).
    struct Damage {
        var index: Int
        var path: String
        var offset: Int
        var reason: String
        var bytes: [UInt8]
        /// The sequence the damaged record should have had.
        var expected: UInt64
    }

    func run(_ report: inout RecoveryReport, log: (String) -> Void) throws {
        let segments = try FileSystem.contentsOfDirectory(walDirectory).filter { $0.hasSuffix(".log") }
        var expected: UInt64? = nil
        var removals: [(path: String, line: String?)] = []
        var tornCut: (path: String, offset: Int, lost: Int)?
        var damage: Damage?
        var end: (path: String, offset: Int)?
        for (index, name) in segments.enumerated() {
            let path = walDirectory + "/" + name
            let bytes = try FileSystem.readFile(path)
            let scan = LogFraming.scan(bytes)
            let isLast = index == segments.count - 1
            func stop(_ offset: Int, _ reason: String, expected sequence: UInt64) {
                damage = Damage(
                    index: index, path: path, offset: offset, reason: reason, bytes: bytes, expected: sequence)
            }
            switch scan.damage {
            case .tornTail(offset: 0)?:
                guard isLast else {
                    stop(0, "incomplete or zeroed segment header", expected: expected ?? 0)
                    break
                }
                let line = "removed \(path): \(bytes.count) bytes of a torn segment header; it was never acknowledged"
                removals.append((path, bytes.isEmpty ? nil : line))
                continue
            case .corrupt(offset: 0, let reason)?:
                stop(0, reason, expected: expected ?? 0)
            default:
                break
            }
            if damage != nil { break }
            let first = scan.firstSequence
            if let expected, first != expected {
                stop(
                    0, "segment starts at sequence \(first) where \(expected) was expected (a segment is missing)",
                    expected: expected)
                break
            }
            if expected == nil, !repair, first > lowestApplied + 1 {
                stop(
                    0,
                    "segment starts at sequence \(first) but the snapshots end at \(lowestApplied) (a segment is missing)",
                    expected: lowestApplied + 1)
                break
            }
            let found = scan.damage
            let records = Array(scan.records.prefix { record in found.map { record.offset < $0.offset } ?? true })
            for (record, error) in replayInLanes(records, report: &report) {
                // The record is intact (its CRC holds) but cannot be applied: it was never acknowledged (the
                // insert that logged it failed), so keep it aside rather than stop every start on it.
                try quarantine(record, segment: name, reason: error, log: log)
                report.quarantinedRecords += 1
            }
            let replayed = records.count
            let next = first + UInt64(replayed)
            if case .tornTail? = found, isLast, replayed == 0 {
                removals.append(
                    (path, "removed \(path): a torn first record (offset \(found!.offset)); it was never acknowledged"))
                continue
            }
            if found == nil, isLast, replayed == 0 {
                // A segment started just before a stop or crash holds nothing: remove it (a new one replaces it).
                removals.append((path, nil))
                continue
            }
            expected = next
            report.nextSequence = max(report.nextSequence, next)
            end = (path, found?.offset ?? bytes.count)
            guard let found else { continue }
            if case .tornTail(let offset) = found, isLast {
                tornCut = (path, offset, bytes.count - offset)
                continue
            }
            let reason: String
            switch found {
            case .tornTail: reason = "truncated record in a segment that is not the last"
            case .corrupt(_, let why): reason = why
            }
            stop(found.offset, reason, expected: next)
            break
        }
        let mark = readMark()
        let missing = mark.sequence.flatMap {
            missingAcknowledged(mark: $0, lastSequence: report.nextSequence - 1, end: end)
        }
        // Dropping a torn tail is safe only on the mark's word: without one it may hold acknowledged records.
        let dropped = removals.compactMap { $0.line == nil ? nil : $0.path } + (tornCut.map { [$0.path] } ?? [])
        let unproven = mark.problem.flatMap { problem in
            dropped.isEmpty
                ? nil
                : "\(walDirectory)/\(DurableMarkFile.name): \(problem), so start-up cannot tell whether the torn end of "
                    + dropped.joined(separator: ", ") + " held acknowledged records"
        }
        if !repair {
            if let damage {
                throw HealthError(
                    .storageUnavailable,
                    "\(damage.path): \(damage.reason) at offset \(damage.offset) (\(damage.bytes.count - damage.offset) bytes from there on, "
                        + "\(segments.count - damage.index - 1) later segments); start hkd with --repair to keep everything before it "
                        + "(what it cuts is kept as *.damaged)")
            }
            if let missing {
                throw HealthError(
                    .storageUnavailable,
                    missing + "; acknowledged records are missing (a truncated or deleted segment, or zeroed pages): "
                        + "restore the log from a backup, or start hkd with --repair to keep the records before it")
            }
            if let unproven {
                throw HealthError(
                    .storageUnavailable,
                    unproven + ": restore the log from a backup, or start hkd with --repair to cut the torn end "
                        + "(what it cuts is kept as *.damaged)")
            }
        }
        if let problem = mark.problem, unproven == nil, !segments.isEmpty {
            log(
                "\(walDirectory)/\(DurableMarkFile.name): \(problem); the log ends cleanly, so start-up goes on without "
                    + "it (acknowledged records lost at a record boundary could not be told) and writes a new mark")
        }
        for removal in removals {
            if unproven != nil, removal.line != nil {
                report.repairs.append(
                    "kept \(removal.path) as \(try DamagedCopies.setAside(removal.path)): \(unproven!)")
                continue
            }
            try FileSystem.remove(removal.path)
            if let line = removal.line { log(line) }
        }
        if let tornCut {
            if let unproven {
                let copy = try DamagedCopies.keepCopy(of: tornCut.path, try FileSystem.readFile(tornCut.path))
                report.repairs.append(
                    "cut \(tornCut.path) at offset \(tornCut.offset), kept whole as \(copy): \(unproven)")
            }
            try Recovery.cut(tornCut.path, at: tornCut.offset)
            report.tornBytes = tornCut.lost
            if unproven == nil {
                log(
                    "cut off \(tornCut.lost) bytes of a torn record at the end of \(tornCut.path) (offset \(tornCut.offset)); it was never acknowledged"
                )
            }
        }
        if let damage { try cut(damage, segments: segments, report: &report) }
        if let missing { report.repairs.append(missing + "; their samples are lost") }
        if let end, damage == nil { try Recovery.sync(end.path) }
        if !removals.isEmpty || damage != nil { try FileSystem.syncDirectory(walDirectory) }
    }

    /// The durable mark, or what is wrong with it: missing, or damaged.
    private func readMark() -> (sequence: UInt64?, problem: String?) {
        do {
            guard let mark = try DurableMarkFile.read(walDirectory) else { return (nil, "it is missing") }
            return (mark, nil)
        } catch {
            return (nil, "it is damaged (\((error as? HealthError)?.message ?? "\(error)"))")
        }
    }

    /// A description of the acknowledged records the log lacks, when the durable mark is past its end.
    private func missingAcknowledged(mark: UInt64, lastSequence: UInt64, end: (path: String, offset: Int)?) -> String? {
        guard mark > lastSequence else { return nil }
        let place = end.map { "\($0.path) at offset \($0.offset)" } ?? walDirectory
        return "\(place): the log ends at sequence \(lastSequence), but records through \(mark) were acknowledged "
            + "(\(walDirectory)/\(DurableMarkFile.name)): \(mark - lastSequence) records"
    }

    /// `--repair`: keeps the damaged segment's bytes as `.damaged`, cuts it at the damage (removes it when the
    /// header is damaged) and sets later segments aside; counts the samples in what it could not keep.
    private func cut(_ damage: Damage, segments: [String], report: inout RecoveryReport) throws {
        let copy = try DamagedCopies.keepCopy(of: damage.path, damage.bytes)
        var lost = LogFraming.salvage(
            damage.bytes, from: max(damage.offset, LogFraming.headerSize), expected: damage.expected)
        if damage.offset < LogFraming.headerSize {
            try FileSystem.remove(damage.path)
        } else {
            try Recovery.cut(damage.path, at: damage.offset)
        }
        var line =
            "cut \(damage.path) at offset \(damage.offset) (\(damage.reason)), dropping "
            + "\(damage.bytes.count - damage.offset) bytes (the whole segment is kept as \(copy))"
        for later in segments[(damage.index + 1)...] {
            let path = walDirectory + "/" + later
            let bytes = try FileSystem.readFile(path)
            let first = bytes.count >= LogFraming.headerSize ? LogFraming.scan(bytes).firstSequence : 0
            lost += LogFraming.salvage(bytes, from: LogFraming.headerSize, expected: first)
            line += "; renamed \(later) to \((try DamagedCopies.setAside(path)).split(separator: "/").last ?? "")"
        }
        let samples = lost.reduce(0) { total, record in
            guard case .insert(let batch, _)? = try? LogChange.decode(kind: record.kind, from: record.payloadReader)
            else { return total }
            return total + batch.count
        }
        report.lostSamples += samples
        line += "; could not keep \(samples) inserted samples in \(lost.count) readable records after the damage"
        report.repairs.append(line)
    }

    /// Replays `records` (in log order) on every core: each store's records (``Recovery/storeKey(_:)``) in one
    /// lane, in their order, the lanes side by side, so a store sees its changes in log order and hands out the
    /// same anchors as a replay on one thread. Each series' columns are sized first for the inserts the snapshots
    /// do not hold (a column growing by an eighth at a time is copied about eight times over on its way to its
    /// final size). Returns the records that could not be applied, with why, in log order.
    private func replayInLanes(
        _ records: [LogFraming.Record], report: inout RecoveryReport
    ) -> [(LogFraming.Record, any Error)] {
        let laneCount = max(1, min(PosixThread.processorCount, 16))
        var lanes = [[Int]](repeating: [], count: laneCount)
        var laneOfStore: [String: Int] = [:]
        var rows: [String: [String: Int]] = [:]
        for (index, record) in records.enumerated() {
            // The store an insert goes to is read from its header alone; any other record is decoded (they are
            // few). A record that does not decode goes to a lane of its own and fails there.
            let key: String
            if let shape = LogChange.insertShape(kind: record.kind, from: record.payloadReader) {
                key = (try? Recovery.storeKey(shape.type)) ?? ""
                if !key.isEmpty, record.sequence > applied[key] ?? 0 {
                    rows[key, default: [:]][shape.subject, default: 0] += shape.rows
                }
            } else {
                key =
                    (try? LogChange.decode(kind: record.kind, from: record.payloadReader)).flatMap {
                        try? Recovery.storeKey($0.type)
                    } ?? ""
            }
            let lane =
                laneOfStore[key]
                ?? {
                    let next = laneOfStore.count % laneCount
                    laneOfStore[key] = next
                    return next
                }()
            lanes[lane].append(index)
        }
        for (name, subjects) in rows {
            // A type this build does not know is reported by the replay.
            guard let type = try? QuantityType.named(name) else { continue }
            for (subject, count) in subjects { store.reserve(subject: subject, type: type, rows: count) }
        }
        let outcomes = Mutex<(reports: [RecoveryReport], failures: [(index: Int, error: any Error)])>(([], []))
        let (store, applied, lanesOfRecords) = (store, applied, lanes)
        DispatchQueue.concurrentPerform(iterations: laneCount) { lane in
            var laneReport = RecoveryReport()
            var failures: [(index: Int, error: any Error)] = []
            for index in lanesOfRecords[lane] {
                do {
                    try Recovery.replay(records[index], store: store, applied: applied, report: &laneReport)
                } catch {
                    failures.append((index, error))
                }
            }
            outcomes.withLock { outcomes in
                outcomes.reports.append(laneReport)
                outcomes.failures += failures
            }
        }
        let (reports, failures) = outcomes.withLock { $0 }
        for lane in reports {
            report.replayedRecords += lane.replayedRecords
            report.skippedRecords += lane.skippedRecords
        }
        return failures.sorted { $0.index < $1.index }.map { (records[$0.index], $0.error) }
    }

    /// Writes an intact record that cannot be applied to `quarantine/<segment>@<offset>.record` in the data
    /// directory (the record's bytes exactly as framed in the log), and logs why.
    private func quarantine(_ record: LogFraming.Record, segment: String, reason: any Error, log: (String) -> Void)
        throws
    {
        try FileSystem.makeDirectories(quarantineDirectory, permissions: 0o700)
        let path = quarantineDirectory + "/\(segment)@\(record.offset).record"
        let bytes = LogFraming.record(kind: record.kind, sequence: record.sequence, payload: record.payload)
        try FileSystem.writeFileAtomically(path, bytes, permissions: 0o600)
        log(
            "quarantined log record \(record.sequence) (wal/\(segment) offset \(record.offset)): it cannot be applied "
                + "(\(reason)); its bytes are kept in \(path) and start-up goes on without it")
    }

}
