import Foundation
import HealthModel

/// What a prepared batch will change in its series, decided before anything changes (so a batch is applied
/// whole or not at all, and the write-ahead log is written only for batches that change something).
///
/// Rules (HEALTHKIT.md §3): a batch id the series applied recently repeats its first outcome; a row whose UUID
/// is stored with the same content (start, end, canonical value, source) is a duplicate, with other content a
/// ``ErrorCode/uuidConflict``; in a batch whose values were rounded (``SampleBatch/valueDigits``: an export's), a
/// row whose UUID is new is a duplicate when a stored sample of the same source, start and end has a value that
/// differs but agrees within the rounding (``RoundedValues``), and replaces a stored sample of the same source,
/// start, end and value that is named by its content identity alone (an export imported before element
/// identities, Protocol/STORAGE.md "Content identity"); a row with a sync identifier replaces the sample holding
/// it when its version is higher and is ignored (counted as a duplicate) otherwise.
struct InsertPlan: Sendable {
    /// Set when the batch id was applied before: nothing changes, its first outcome is reported again.
    var repeated: SeriesLedger.BatchOutcome?
    /// Rows of the batch to add, ascending.
    var added: [Int] = []
    /// Rows of the batch that change nothing.
    var duplicates = 0
    /// Stored rows replaced by a higher sync version, ascending.
    var replacedRows: [Int] = []
    /// Sync identifiers the added rows take over.
    var syncUpdates: [(SeriesLedger.SyncKey, SeriesLedger.SyncEntry)] = []

    /// Whether applying the plan leaves the series as it is.
    var changesNothing: Bool { repeated != nil || (added.isEmpty && replacedRows.isEmpty) }

    /// What applying the plan reports.
    var outcome: SeriesLedger.BatchOutcome {
        repeated ?? SeriesLedger.BatchOutcome(inserted: added.count, duplicates: duplicates)
    }

    /// Plans `batch` against `series` (`nil`: the subject has no series of this type yet).
    init(_ batch: PreparedBatch, against series: Series?) throws {
        if let outcome = series?.ledger.outcome(ofBatch: batch.batchID, writer: batch.writer) {
            repeated = outcome
            return
        }
        let rows = batch.rows
        let sent = batch.sentUUIDs
        // UUIDs derived from the batch id are distinct by construction; sent ones are checked with a
        // fingerprint multiset, and only a fingerprint seen twice looks for the earlier row.
        var seen = FingerprintMultiset()
        if let sent { seen.reserve(sent.count) }
        // Derived UUIDs of a batch id the series never applied cannot be stored as derived UUIDs; with no UUID
        // kept explicitly either, none of this batch's UUIDs can be stored and the rows skip the UUID checks
        // (the common case of ingest: a new batch without UUIDs).
        let checkDerived = sent != nil || series?.batches.hasDerivedBatch(batch.batchID) == true
        let checksUUIDs =
            checkDerived || series?.ledger.holdsKeptUUIDs == true || series?.batches.holdsContentDerived == true
        let namedByContent = batch.naming.isContentDerived
        if !checksUUIDs, batch.syncTags == nil, batch.valueDigits == nil {
            added = Array(0..<rows.count)
            return
        }
        // One non-optional series for the per-row checks (an empty one, which holds nothing, when the subject has
        // none): unwrapping the optional in the loop copied the series, retaining each of its columns, per row.
        let current = series ?? Series(type: batch.type)
        var pendingSync: [SeriesLedger.SyncKey: (version: Int64, row: Int)] = [:]
        // The batch's rows mostly lie near each other: their lookups share the block decoded last.
        var cache = DecodedBlockCache()
        // One namer for every lookup: it keeps each source's hash prefix and the batch entry found last.
        var namer = current.namer
        var dropped = Set<Int>()
        /// Anchors of stored samples an earlier row of this batch replaces (each is replaced once).
        var claimed = Set<UInt64>()
        added.reserveCapacity(rows.count)
        for row in 0..<rows.count {
            if checksUUIDs {
                let uuid = batch.uuid(row: row)
                let fingerprint = SeriesLedger.fingerprint(uuid)
                if let sent, seen.contains(fingerprint), let earlier = sent[..<row].firstIndex(of: uuid) {
                    guard InsertPlan.sameContent(batch, row, batch, earlier) else {
                        throw InsertPlan.conflict(batch, row, uuid, "another row of the batch")
                    }
                    duplicates += 1
                    continue
                }
                if sent != nil { seen.insert(fingerprint) }
                if current.mayHold(uuid, checkingDerived: checkDerived, namedByContent: namedByContent),
                    let stored = current.row(
                        of: uuid, startingAt: rows.starts[row], namedByContent: namedByContent, namer: &namer,
                        cache: &cache)?.content
                {
                    // Batch ids are each client's own: another identity's batch with the same id derives the same
                    // UUIDs, which then cannot name this identity's samples too.
                    var hint = 0
                    if sent == nil, current.writer(anchor: stored.arrivals[0], hint: &hint) != batch.writer {
                        throw InsertPlan.batchIDTaken(batch, row, uuid)
                    }
                    guard current.hasContent(of: batch, row: row, at: stored) else {
                        throw InsertPlan.conflict(batch, row, uuid, "a stored sample")
                    }
                    duplicates += 1
                    continue
                }
            }
            if let digits = batch.valueDigits {
                switch current.roundedMatch(
                    batch, row: row, digits: digits, claimed: claimed, namer: &namer, cache: &cache)
                {
                case .none: break
                case .duplicate:
                    duplicates += 1
                    continue
                case .contentNamed(let stored, let anchor):
                    replacedRows.append(stored)
                    claimed.insert(anchor)
                }
            }
            if let tag = batch.syncTags?[row] {
                let source = batch.sources[Int(batch.sourceIndices[row])]
                let key = SeriesLedger.SyncKey(sourceKey: SeriesSources.identityKey(source), identifier: tag.identifier)
                if let pending = pendingSync[key] {
                    if pending.version >= tag.version {
                        duplicates += 1
                        continue
                    }
                    dropped.insert(pending.row)
                    duplicates += 1
                } else if let held = current.ledger.syncEntry(key) {
                    if held.version >= tag.version {
                        duplicates += 1
                        continue
                    }
                    if let stored = current.row(
                        of: held.uuid, startingAt: held.start, namedByContent: false, namer: &namer, cache: &cache)?.row
                    {
                        replacedRows.append(stored)
                    }
                }
                pendingSync[key] = (tag.version, row)
            }
            added.append(row)
        }
        if !dropped.isEmpty { added.removeAll { dropped.contains($0) } }
        replacedRows = Array(Set(replacedRows)).sorted()
        syncUpdates = pendingSync.map { key, pending in
            (
                key,
                SeriesLedger.SyncEntry(
                    version: pending.version, uuid: batch.uuid(row: pending.row), start: rows.starts[pending.row])
            )
        }
    }

    /// Whether rows `a` of `x` and `b` of `y` hold the same sample content.
    static func sameContent(_ x: PreparedBatch, _ a: Int, _ y: PreparedBatch, _ b: Int) -> Bool {
        x.rows.starts[a] == y.rows.starts[b] && x.rows.ends[a] == y.rows.ends[b]
            && x.rows.values[a].bitPattern == y.rows.values[b].bitPattern
            && x.sources[Int(x.sourceIndices[a])] == y.sources[Int(y.sourceIndices[b])]
    }

    static func batchIDTaken(_ batch: PreparedBatch, _ row: Int, _ uuid: UUID) -> HealthError {
        HealthError(
            .uuidConflict,
            "batch \(batch.batchID) row \(row): another identity stored a batch with id \(batch.batchID) for this "
                + "subject and \(batch.type), so the UUID derived from it (\(uuid.uuidString)) is taken; send the "
                + "batch under a new random batch id, or with its own UUIDs")
    }

    static func conflict(_ batch: PreparedBatch, _ row: Int, _ uuid: UUID, _ holder: String) -> HealthError {
        HealthError(
            .uuidConflict,
            "batch \(batch.batchID) row \(row): sample \(uuid.uuidString) of \(batch.type) exists as \(holder) "
                + "with different content")
    }
}

extension Series {
    /// Whether `uuid` may be stored (false means certainly not): as a UUID kept as sent, (when
    /// `checkingDerived`) as one derived from a batch in the batch table, or as one recomputed from a stored row's
    /// content. With `namedByContent` (`uuid` derives from the content of the row sent with it), a stored row of
    /// that content is one starting where it starts; without, only a version 8 UUID can name a row by content.
    func mayHold(_ uuid: UUID, checkingDerived: Bool = true, namedByContent: Bool = false) -> Bool {
        ledger.mayContain(uuid) || (checkingDerived && !batches.anchors(ofDerived: uuid).isEmpty)
            || (batches.holdsContentDerived && (namedByContent || uuid.isContentIdentityForm))
    }

    /// The row holding `uuid` and its content (one row, decoded): first among the rows starting at `start`, then
    /// (for a UUID stored with another start) by its anchor when it is derived, or by a scan of every row when it
    /// was kept as sent or (unless `namedByContent`: see ``mayHold(_:checkingDerived:namedByContent:)``) may
    /// name a row by content. `namer` names this series' rows; `cache` keeps the block decoded last.
    func row(
        of uuid: UUID, startingAt start: Timestamp, namedByContent: Bool, namer: inout RowNamer,
        cache: inout DecodedBlockCache
    ) -> (row: Int, content: SeriesRows)? {
        var content = SeriesRows()
        let atStart = rows.firstRow(startingAt: start, cache: &cache) { same, local in
            guard namer.uuid(local, of: same) == uuid else { return false }
            content = same.copy(local..<(local + 1))
            return true
        }
        if let atStart { return (atStart, content) }
        let derivedAnchors = batches.anchors(ofDerived: uuid)
        if let oldest = derivedAnchors.min() {
            let found = rows.rowsArrived(after: oldest - 1).arrived.first { derivedAnchors.contains($0.anchor) }?.row
            return found.map { ($0, decodedRows([$0])) }
        }
        let scansContentDerived = !namedByContent && batches.holdsContentDerived && uuid.isContentIdentityForm
        guard ledger.mayContain(uuid) || scansContentDerived else { return nil }
        // Rare: a UUID sent again with other content (a conflict), or a fingerprint shared by chance.
        let chunk = 4096
        for first in stride(from: 0, to: count, by: chunk) {
            let decoded = decodedRows(in: first..<min(first + chunk, count))
            if let found = (0..<decoded.count).first(where: { namer.uuid($0, of: decoded) == uuid }) {
                return (first + found, decoded.copy(found..<(found + 1)))
            }
        }
        return nil
    }

    /// Whether `stored` (one stored row, decoded) holds the same content as `row` of `batch`.
    func hasContent(of batch: PreparedBatch, row: Int, at stored: SeriesRows) -> Bool {
        stored.starts[0] == batch.rows.starts[row] && stored.ends[0] == batch.rows.ends[row]
            && stored.values[0].bitPattern == batch.rows.values[row].bitPattern
            && sources.infos[Int(stored.sourceIDs[0])] == batch.sources[Int(batch.sourceIndices[row])]
    }

    /// What a stored sample of the source, start and end of `row` of `batch` (a batch whose values were rounded to
    /// `digits` digits) makes of the row: nothing, a duplicate (its value differs but agrees within the rounding:
    /// ``RoundedValues``), or a stored sample of the same value named by its content identity alone
    /// (``HealthModel/Sample/stableID()``, how exports were named before element identities) that the row
    /// replaces, unless its anchor is among `claimed`. A stored sample of the same value under another UUID is
    /// another element of the export: the row is new.
    func roundedMatch(
        _ batch: PreparedBatch, row: Int, digits: Int, claimed: Set<UInt64>, namer: inout RowNamer,
        cache: inout DecodedBlockCache
    ) -> RoundedMatch {
        let source = batch.sources[Int(batch.sourceIndices[row])]
        let (start, end, value) = (batch.rows.starts[row], batch.rows.ends[row], batch.rows.values[row])
        let infos = sources.infos
        var contentNamed: UInt64?
        let found = rows.firstRow(startingAt: start, cache: &cache) { same, stored in
            guard same.ends[stored] == end, infos[Int(same.sourceIDs[stored])] == source else { return false }
            guard same.values[stored].bitPattern == value.bitPattern else {
                return RoundedValues.agree(same.values[stored], value, digits: digits)
            }
            let anchor = same.arrivals[stored]
            guard !claimed.contains(anchor) else { return false }
            let contentID = SampleContentIdentity.uuid(
                sourceName: Array(source.name.utf8), typeIdentifier: Array(batch.type.identifier.utf8), start: start,
                end: end, canonicalValue: value)
            guard namer.uuid(stored, of: same) == contentID else { return false }
            contentNamed = anchor
            return true
        }
        guard let found else { return .none }
        if let contentNamed { return .contentNamed(row: found, anchor: contentNamed) }
        return .duplicate
    }

    /// What ``roundedMatch(_:row:digits:claimed:namer:cache:)`` found.
    enum RoundedMatch {
        case none
        case duplicate
        /// The stored sample at `row` (arrived with `anchor`), named by its content identity, which the row
        /// replaces.
        case contentNamed(row: Int, anchor: UInt64)
    }

    /// Applies a plan made against this series: removes replaced rows (recorded as deletions), merges added ones
    /// stamped with anchors from `clock` (one per batch row, added or not: see ``BatchTable``), updates the ledger.
    mutating func apply(_ plan: InsertPlan, of batch: PreparedBatch, clock: inout ChangeClock) {
        guard !plan.changesNothing else { return }
        removeRows(plan.replacedRows, clock: &clock)
        if !plan.added.isEmpty {
            append(batch, rows: plan.added, firstAnchor: clock.reserve(batch.rows.count))
            if batch.naming.isKept { ledger.add(uuids: plan.added.lazy.map(batch.uuid(row:))) }
        }
        for (key, entry) in plan.syncUpdates { ledger.setSync(key, entry) }
        ledger.record(batch: .init(id: batch.batchID, writer: batch.writer), plan.outcome)
    }
}
