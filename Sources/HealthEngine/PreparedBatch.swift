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
    /// Per dictionary entry: whether a row of it carries `HKMetadataKeyWasUserEntered`.
    let userEnteredSources: [Bool]
    /// Per row: index into ``sources``.
    let sourceIndices: [UInt32]
    /// Starts, ends, canonical values and UUIDs; source ids are filled in against the series' table.
    var rows: SeriesRows

    init(_ batch: SampleBatch) throws {
        try batch.validateShape()
        let type = try QuantityType.named(batch.typeIdentifier)
        try SampleRules.validate(subject: batch.subject)
        let unit = try HealthUnit(parsing: batch.unit)
        try SampleRules.validate(unit: unit, for: type)
        let toCanonical = UnitTransform(from: unit, to: type.canonicalUnit)
        var rows = SeriesRows()
        rows.starts = ContiguousArray(batch.starts)
        rows.ends = ContiguousArray(batch.ends)
        rows.values.reserveCapacity(batch.count)
        rows.uuids = batch.uuids.map { ContiguousArray($0) } ?? ContiguousArray((0..<batch.count).map(batch.uuid(row:)))
        var used = [Bool](repeating: false, count: batch.sources.count)
        var userEntered = [Bool](repeating: false, count: batch.sources.count)
        var row = 0
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
                if let metadata = batch.metadata, PreparedBatch.isUserEntered(metadata[row]) {
                    userEntered[source] = true
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
        self.rows = rows
    }

    /// The dictionary entries some row uses.
    var sourcesInUse: [SourceInfo] { sources.indices.filter { usedSources[$0] }.map { sources[$0] } }

    /// Whether a row's metadata marks it as entered by hand (`HKMetadataKeyWasUserEntered` true).
    static func isUserEntered(_ metadata: [String: MetadataValue]) -> Bool {
        switch metadata[MetadataKey.wasUserEntered] {
        case .number(let flag): flag != 0
        case .string(let flag): flag == "1" || flag.lowercased() == "true" || flag.lowercased() == "yes"
        case .date, .quantity, nil: false
        }
    }
}

extension Series {
    /// Adds a prepared batch: registers its sources (and user-entered flags), then merges its rows.
    /// The caller has checked that the source table has room.
    mutating func append(_ batch: PreparedBatch) {
        var idOfBatchSource = [UInt16](repeating: 0, count: batch.sources.count)
        for index in batch.sources.indices where batch.usedSources[index] {
            idOfBatchSource[index] = sources.intern(
                batch.sources[index], userEntered: batch.userEnteredSources[index])
        }
        var rows = batch.rows
        rows.sourceIDs = ContiguousArray(batch.sourceIndices.lazy.map { idOfBatchSource[Int($0)] })
        merge(rows)
    }
}
