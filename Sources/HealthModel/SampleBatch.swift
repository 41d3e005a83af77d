import Foundation

/// A batch of samples of one type for one subject, held as columns: the unit of ingest.
///
/// This is what an insert request carries (HealthCodec encodes it column by column) and what the engine appends
/// to a shard, without per-sample objects in between. Row `i` is
/// `(starts[i], ends[i], values[i], sources[sourceIndices[i]], uuid(row: i), metadata?[i])`.
public struct SampleBatch: Hashable, Sendable {
    /// Chosen by the client, unique per subject; a batch re-sent with the same id adds nothing.
    public var batchID: UInt64
    /// The person every row is about.
    public var subject: String
    /// Short or full quantity-type identifier, as sent.
    public var typeIdentifier: String
    /// The HKUnit string all ``values`` are in.
    public var unit: String
    /// The source dictionary rows point into.
    public var sources: [SourceInfo]
    /// Start of each row.
    public var starts: [Timestamp]
    /// End of each row.
    public var ends: [Timestamp]
    /// Value of each row, in ``unit``.
    public var values: [Double]
    /// Each row's position in ``sources``.
    public var sourceIndices: [UInt32]
    /// Explicit UUIDs, one per row; `nil` means each row's UUID is derived from the batch id and the row number.
    public var uuids: [UUID]?
    /// Metadata, one dictionary per row; `nil` when no row has any.
    public var metadata: [[String: MetadataValue]]?
    /// The significant decimal digits the values were rounded to before they were sent (``SampleBatch/exportDigits``
    /// for an Apple Health export), or `nil` when they are as measured. With it, a row whose UUID is not stored is
    /// already stored when its series holds a sample of the same source, start and end whose value agrees within
    /// that rounding (``RoundedValues``): so a re-export printed in other units adds nothing.
    public var valueDigits: Int?

    /// The digits Apple's Health export prints a value with, in the person's display unit (`%g`: 6).
    public static let exportDigits = 6

    /// A batch; the columns default to empty so rows can be added with ``append(start:end:value:source:uuid:metadata:)``.
    public init(
        batchID: UInt64, subject: String, typeIdentifier: String, unit: String, sources: [SourceInfo] = [],
        starts: [Timestamp] = [], ends: [Timestamp] = [], values: [Double] = [], sourceIndices: [UInt32] = [],
        uuids: [UUID]? = nil, metadata: [[String: MetadataValue]]? = nil, valueDigits: Int? = nil
    ) {
        self.batchID = batchID
        self.subject = subject
        self.typeIdentifier = typeIdentifier
        self.unit = unit
        self.sources = sources
        self.starts = starts
        self.ends = ends
        self.values = values
        self.sourceIndices = sourceIndices
        self.uuids = uuids
        self.metadata = metadata
        self.valueDigits = valueDigits
    }

    /// Number of rows.
    public var count: Int { starts.count }

    /// The UUID of row `row`: the explicit one, or the one derived from the batch id.
    public func uuid(row: Int) -> UUID {
        if let uuids { return uuids[row] }
        return SampleBatch.derivedUUID(batchID: batchID, row: UInt32(truncatingIfNeeded: row))
    }

    /// The UUID of a row sent without one: batch id (8 bytes, big-endian), row (4 bytes, big-endian), then the
    /// bytes `68 6B 64 00` ("hkd\0"). Deterministic, so a re-sent batch names the same samples.
    public static func derivedUUID(batchID: UInt64, row: UInt32) -> UUID {
        let b = batchID.bigEndian
        let r = row.bigEndian
        return withUnsafeBytes(of: b) { bb in
            withUnsafeBytes(of: r) { rb in
                UUID(
                    uuid: (
                        bb[0], bb[1], bb[2], bb[3], bb[4], bb[5], bb[6], bb[7], rb[0], rb[1], rb[2], rb[3],
                        0x68, 0x6B, 0x64, 0x00
                    ))
            }
        }
    }

    /// The batch id and row a UUID of ``derivedUUID(batchID:row:)``'s form names; `nil` for a UUID of another form.
    public static func batchAndRow(ofDerived uuid: UUID) -> (batchID: UInt64, row: UInt32)? {
        withUnsafeBytes(of: uuid.uuid) { raw in
            guard raw[12] == 0x68, raw[13] == 0x6B, raw[14] == 0x64, raw[15] == 0x00 else { return nil }
            return (
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt32(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
            )
        }
    }

    /// The rows `range` of this batch as a batch of their own (same id, subject, type, unit, sources and value
    /// digits), to send part of a batch.
    public func rows(_ range: Range<Int>) -> SampleBatch {
        var part = self
        part.starts = Array(starts[range])
        part.ends = Array(ends[range])
        part.values = Array(values[range])
        part.sourceIndices = Array(sourceIndices[range])
        part.uuids = uuids.map { Array($0[range]) }
        part.metadata = metadata.map { Array($0[range]) }
        return part
    }

    /// Appends one row, adding its source to the dictionary when new.
    public mutating func append(
        start: Timestamp, end: Timestamp, value: Double, source: SourceInfo, uuid: UUID? = nil,
        metadata rowMetadata: [String: MetadataValue] = [:]
    ) {
        let index: Int
        if let existing = sources.firstIndex(of: source) {
            index = existing
        } else {
            index = sources.count
            sources.append(source)
        }
        if let uuid {
            if uuids == nil { uuids = (0..<count).map { self.uuid(row: $0) } }
            uuids!.append(uuid)
        } else if uuids != nil {
            uuids!.append(SampleBatch.derivedUUID(batchID: batchID, row: UInt32(truncatingIfNeeded: count)))
        }
        if !rowMetadata.isEmpty || metadata != nil {
            if metadata == nil { metadata = Array(repeating: [:], count: count) }
            metadata!.append(rowMetadata)
        }
        starts.append(start)
        ends.append(end)
        values.append(value)
        sourceIndices.append(UInt32(index))
    }

    /// Checks column lengths and source indices (structure only; sample rules are checked against the type).
    public func validateShape() throws {
        let n = count
        guard ends.count == n, values.count == n, sourceIndices.count == n, uuids.map({ $0.count == n }) ?? true,
            metadata.map({ $0.count == n }) ?? true
        else { throw HealthError(.malformedPayload, "batch \(batchID): columns have different lengths") }
        if let bad = sourceIndices.first(where: { Int($0) >= sources.count }) {
            throw HealthError(
                .malformedPayload, "batch \(batchID): source index \(bad) is outside the dictionary of \(sources.count)"
            )
        }
        if let digits = valueDigits, !RoundedValues.digitRange.contains(digits) {
            throw HealthError(
                .malformedPayload,
                "batch \(batchID): values rounded to \(digits) digits; the digits are \(RoundedValues.digitRange.lowerBound)"
                    + "–\(RoundedValues.digitRange.upperBound)")
        }
    }
}

extension SampleBatch {
    /// The rows as ``Sample`` values (type and unit resolved); throws for an unknown type or unit.
    public func samples() throws -> [Sample] {
        let type = try QuantityType.named(typeIdentifier)
        let unit = try type.unit(parsing: unit)
        return (0..<count).map { row in
            Sample(
                uuid: uuid(row: row), subject: subject, type: type, start: starts[row], end: ends[row],
                value: values[row],
                unit: unit, source: sources[Int(sourceIndices[row])], metadata: metadata?[row] ?? [:])
        }
    }

    /// Groups samples into batches of at most `maxRows` rows, one subject, type and unit each, with explicit UUIDs.
    /// `makeBatchID` gives each new batch its id.
    public static func grouping(_ samples: [Sample], maxRows: Int, makeBatchID: () -> UInt64) -> [SampleBatch] {
        struct Key: Hashable {
            var subject: String
            var type: String
            var unit: String
        }
        var order: [Key] = []
        var groups: [Key: [Sample]] = [:]
        for sample in samples {
            let key = Key(subject: sample.subject, type: sample.type.identifier, unit: sample.unit.symbol)
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(sample)
        }
        var batches: [SampleBatch] = []
        for key in order {
            let rows = groups[key]!
            for chunkStart in stride(from: 0, to: rows.count, by: max(1, maxRows)) {
                var batch = SampleBatch(
                    batchID: makeBatchID(), subject: key.subject, typeIdentifier: key.type, unit: key.unit)
                batch.uuids = []
                for sample in rows[chunkStart..<min(rows.count, chunkStart + max(1, maxRows))] {
                    batch.append(
                        start: sample.start, end: sample.end, value: sample.value, source: sample.source,
                        uuid: sample.uuid, metadata: sample.metadata)
                }
                batches.append(batch)
            }
        }
        return batches
    }
}
