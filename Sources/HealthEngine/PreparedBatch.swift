import Foundation
import HealthModel

/// A ``SampleBatch`` checked against its type and converted to the canonical unit, outside any lock.
///
/// Checks are all-or-nothing: the first bad row rejects the whole batch with an error naming the batch and row.
struct PreparedBatch: Sendable {
    let type: QuantityType
    let subject: String
    let batchID: UInt64
    /// The batch's source dictionary.
    let sources: [SourceInfo]
    /// Per dictionary entry: whether any row uses it.
    let usedSources: [Bool]
    /// Per dictionary entry: whether a row of it is marked entered by hand (``SeriesSources/marksUserEntered(_:)``).
    let userEnteredSources: [Bool]
    /// Per row: index into ``sources``.
    let sourceIndices: [UInt32]
    /// The UUIDs sent with the batch; `nil` when they derive from the batch id (distinct by construction).
    let sentUUIDs: ContiguousArray<UUID>?
    /// The client identity writing the batch (0: unknown).
    let writer: UInt32
    /// How the batch table names the batch's rows (``naming(sent:batch:type:rows:)``).
    let naming: RowNaming
    /// Per row: its sync identifier and version; `nil` when no row has one.
    let syncTags: [SyncTag?]?
    /// The digits the values were rounded to before they were sent (``SampleBatch/valueDigits``).
    let valueDigits: Int?
    /// The metadata of the rows that carry any, by row (most batches: none).
    let metadataRows: [Int: [String: MetadataValue]]
    /// Starts, ends and canonical values; source ids and anchors are filled in when the rows are added.
    var rows: SeriesRows

    /// Checks `batch` and converts it; every row is marked as written by `writer`.
    init(_ batch: SampleBatch, writer: UInt32 = 0) throws {
        try batch.validateShape()
        let type = try QuantityType.named(batch.typeIdentifier)
        try SampleRules.validate(subject: batch.subject)
        let unit = try type.unit(parsing: batch.unit)
        let toCanonical = UnitTransform(from: unit, to: type.canonicalUnit)
        var rows = SeriesRows()
        rows.starts = ContiguousArray(batch.starts)
        rows.ends = ContiguousArray(batch.ends)
        rows.values.reserveCapacity(batch.count)
        var used = [Bool](repeating: false, count: batch.sources.count)
        var userEntered = [Bool](repeating: false, count: batch.sources.count)
        var syncTags: [SyncTag?]?
        var metadataRows: [Int: [String: MetadataValue]] = [:]
        var row = 0
        // Rows are checked row by row, with errors naming the first bad one, only when a plain pass over the
        // columns finds a bad row or a row carries metadata; every batch hkd logs passes it.
        if batch.metadata == nil,
            let values = Self.checkedCanonicalValues(batch, type: type, toCanonical: toCanonical)
        {
            rows.values = values
            for index in batch.sourceIndices { used[Int(index)] = true }
            row = batch.count
        }
        do {
            while row < batch.count {
                try SampleRules.validate(
                    start: batch.starts[row], end: batch.ends[row], value: batch.values[row], type: type)
                let canonical = toCanonical.level(batch.values[row])
                guard canonical.isFinite else {
                    throw HealthError(
                        .invalidSample, "\(type) value \(batch.values[row]) \(unit) overflows in \(type.canonicalUnit)")
                }
                rows.values.append(canonical)
                let source = Int(batch.sourceIndices[row])
                used[source] = true
                if let metadata = batch.metadata, !metadata[row].isEmpty {
                    metadataRows[row] = metadata[row]
                    if SeriesSources.marksUserEntered(metadata[row]) { userEntered[source] = true }
                    if let tag = try SyncTag(metadata[row]) {
                        if syncTags == nil { syncTags = Array(repeating: nil, count: batch.count) }
                        syncTags![row] = tag
                    }
                }
                row += 1
            }
        } catch let error as HealthError {
            throw HealthError(error.code, "batch \(batch.batchID) row \(row): \(error.message)")
        }
        self.type = type
        subject = batch.subject
        batchID = batch.batchID
        sources = batch.sources
        usedSources = used
        userEnteredSources = userEntered
        sourceIndices = batch.sourceIndices
        self.syncTags = syncTags
        self.metadataRows = metadataRows
        sentUUIDs = batch.uuids.map { ContiguousArray($0) }
        naming = Self.naming(sent: sentUUIDs, batch: batch, type: type, rows: rows)
        self.writer = writer
        valueDigits = batch.valueDigits
        self.rows = rows
    }

    /// The values of `batch` in the canonical unit when every row keeps ``SampleRules`` and converts to a finite
    /// value (what the row-by-row checks would accept), else nil.
    private static func checkedCanonicalValues(
        _ batch: SampleBatch, type: QuantityType, toCanonical: UnitTransform
    ) -> ContiguousArray<Double>? {
        let (cumulative, categoryValues) = (type.style == .cumulative, type.categoryValues)
        var valid = true
        let values = ContiguousArray<Double>(unsafeUninitializedCapacity: batch.count) { out, count in
            for row in 0..<batch.count {
                let canonical = toCanonical.level(batch.values[row])
                valid =
                    valid
                    && SampleRules.accepts(
                        start: batch.starts[row], end: batch.ends[row], value: batch.values[row],
                        cumulative: cumulative, categoryValues: categoryValues)
                    && canonical.isFinite
                out[row] = canonical
            }
            count = batch.count
        }
        return valid ? values : nil
    }

    /// How the batch table names the rows: sent UUIDs that are all their rows' content identities (`hkq insert`)
    /// or all their element identities (`hkq import`) are recomputed from the rows, other sent ones are kept as
    /// they are, and so are the derived ones of a small batch (``BatchTable/smallBatchRows``); the rest derive
    /// from the batch id.
    private static func naming(sent: ContiguousArray<UUID>?, batch: SampleBatch, type: QuantityType, rows: SeriesRows)
        -> RowNaming
    {
        guard let sent else {
            return batch.count <= BatchTable.smallBatchRows
                ? .kept(KeptUUIDs(ContiguousArray((0..<batch.count).map(batch.uuid(row:))))) : .batch
        }
        guard !sent.isEmpty else { return .kept(KeptUUIDs(sent)) }
        let prefixes = batch.sources.map {
            SampleContentIdentity.prefix(sourceName: $0.name.utf8, typeIdentifier: type.identifier.utf8)
        }
        func base(_ row: Int) -> ContentHash128 {
            SampleContentIdentity.hash(
                prefix: prefixes[Int(batch.sourceIndices[row])], start: rows.starts[row], end: rows.ends[row],
                canonicalValue: rows.values[row])
        }
        if base(0).uuid == sent[0] {
            for row in 1..<sent.count where base(row).uuid != sent[row] { return .kept(KeptUUIDs(sent)) }
            return .content
        }
        var extras = ContiguousArray<UInt64>()
        extras.reserveCapacity(sent.count)
        for row in 0..<sent.count {
            guard let found = SampleElementIdentity.extras(of: sent[row], base: base(row)) else {
                return .kept(KeptUUIDs(sent))
            }
            extras.append(found)
        }
        return .elements(ElementExtras(extras))
    }

    /// The UUID of row `row`.
    func uuid(row: Int) -> UUID {
        sentUUIDs?[row] ?? SampleBatch.derivedUUID(batchID: batchID, row: UInt32(truncatingIfNeeded: row))
    }

    /// The dictionary entries some row uses.
    var sourcesInUse: [SourceInfo] { sources.indices.filter { usedSources[$0] }.map { sources[$0] } }
}

/// A row's `HKMetadataKeySyncIdentifier` and `HKMetadataKeySyncVersion` (HEALTHKIT.md §3).
struct SyncTag: Hashable, Sendable {
    var identifier: String
    var version: Int64

    /// The tag in `metadata`, `nil` without a sync identifier; throws ``ErrorCode/invalidSample`` for an identifier
    /// without a whole-number version.
    init?(_ metadata: [String: MetadataValue]) throws {
        guard let raw = metadata[MetadataKey.syncIdentifier] else { return nil }
        guard case .string(let identifier) = raw, !identifier.isEmpty else {
            throw HealthError(.invalidSample, "\(MetadataKey.syncIdentifier) must be a non-empty string")
        }
        let version: Int64?
        switch metadata[MetadataKey.syncVersion] {
        case .number(let number): version = Int64(exactly: number)
        case .string(let text): version = Int64(text)
        case .date, .quantity, nil: version = nil
        }
        guard let version else {
            throw HealthError(
                .invalidSample, "sync identifier \"\(identifier)\" needs a whole-number \(MetadataKey.syncVersion)")
        }
        self.identifier = identifier
        self.version = version
    }
}

extension Series {
    /// Adds the rows `subset` of a prepared batch (all of them when `nil`): registers the batch in the batch
    /// table with anchors `firstAnchor ..< firstAnchor + batch.rows.count` (row `i` of the batch gets
    /// `firstAnchor + i`), registers the rows' sources (and user-entered flags), then merges the rows. The caller
    /// has checked that the source table has room and that the anchors follow every anchor stored.
    mutating func append(_ batch: PreparedBatch, rows subset: [Int]? = nil, firstAnchor: UInt64 = 1) {
        registerBatch(
            AppliedBatch(
                batchID: batch.batchID, firstAnchor: firstAnchor, firstRow: 0, count: UInt32(batch.rows.count),
                writer: batch.writer, naming: batch.naming))
        var used = batch.usedSources
        var userEntered = batch.userEnteredSources
        if let subset {
            used = [Bool](repeating: false, count: batch.sources.count)
            for row in subset { used[Int(batch.sourceIndices[row])] = true }
            // Only rows that are stored mark their source (HEALTHKIT.md §8): a duplicate sent again with the mark
            // entered nothing.
            if userEntered.contains(true) {
                userEntered = [Bool](repeating: false, count: batch.sources.count)
                for row in subset {
                    if let entry = batch.metadataRows[row], SeriesSources.marksUserEntered(entry) {
                        userEntered[Int(batch.sourceIndices[row])] = true
                    }
                }
            }
        }
        var idOfBatchSource = [UInt16](repeating: 0, count: batch.sources.count)
        for index in batch.sources.indices where used[index] {
            idOfBatchSource[index] = sources.intern(batch.sources[index], userEntered: userEntered[index])
        }
        if !batch.metadataRows.isEmpty {
            let kept = subset.map(Set.init)
            for (row, entry) in batch.metadataRows where kept?.contains(row) ?? true {
                setMetadata(entry, anchor: firstAnchor + UInt64(row))
            }
        }
        // A constant, so the closures below read it without an exclusivity check per row.
        let ids = idOfBatchSource
        var rows: SeriesRows
        if let subset, subset.count < batch.rows.count {
            rows = SeriesRows()
            rows.starts = ContiguousArray(subset.lazy.map { batch.rows.starts[$0] })
            rows.ends = ContiguousArray(subset.lazy.map { batch.rows.ends[$0] })
            rows.values = ContiguousArray(subset.lazy.map { batch.rows.values[$0] })
            rows.sourceIDs = ContiguousArray(subset.lazy.map { ids[Int(batch.sourceIndices[$0])] })
            rows.arrivals = ContiguousArray(subset.lazy.map { firstAnchor + UInt64($0) })
        } else {
            rows = batch.rows
            rows.sourceIDs =
                ids.count == 1
                ? ContiguousArray(repeating: ids[0], count: rows.count)
                : ContiguousArray(batch.sourceIndices.lazy.map { ids[Int($0)] })
            rows.arrivals = ContiguousArray(firstAnchor..<(firstAnchor + UInt64(rows.count)))
        }
        merge(rows)
    }
}
