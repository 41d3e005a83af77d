import Foundation
import HealthModel

/// What an insert did.
public struct InsertResult: Hashable, Sendable {
    /// Rows added to the store.
    public var inserted: Int
    /// Rows that changed nothing: already stored with the same UUID and content, or carrying a sync version not
    /// higher than the stored one.
    public var duplicates: Int

    /// A result counting `inserted` new rows and `duplicates` rows that changed nothing.
    public init(inserted: Int, duplicates: Int = 0) {
        self.inserted = inserted
        self.duplicates = duplicates
    }
}

/// The answer to a sample query, as columns in the requested order, ready to be sent in chunks.
///
/// Row `i` is `(starts[i], ends[i], values[i] in unit, sources[sourceIndices[i]], uuids[i])`.
public struct SampleQueryResult: Hashable, Sendable {
    /// The quantity type queried.
    public var type: QuantityType
    /// The unit ``values`` are in.
    public var unit: HealthUnit
    /// The sources rows point into (only those some row uses).
    public var sources: [SourceInfo]
    /// Start of each row.
    public var starts: [Timestamp]
    /// End of each row.
    public var ends: [Timestamp]
    /// Value of each row in ``unit``.
    public var values: [Double]
    /// Index into ``sources`` of each row.
    public var sourceIndices: [UInt32]
    /// UUID of each row.
    public var uuids: [UUID]
    /// Metadata of each row; `nil` when no row has any.
    public var metadata: [[String: MetadataValue]]?
    /// Where the next page begins (the last row's position), when a limit left rows out; `nil` when no row
    /// is left.
    public var next: SamplePosition?

    /// A result from its columns (all of the same length).
    public init(
        type: QuantityType, unit: HealthUnit, sources: [SourceInfo], starts: [Timestamp], ends: [Timestamp],
        values: [Double], sourceIndices: [UInt32], uuids: [UUID], metadata: [[String: MetadataValue]]? = nil
    ) {
        self.metadata = metadata
        self.type = type
        self.unit = unit
        self.sources = sources
        self.starts = starts
        self.ends = ends
        self.values = values
        self.sourceIndices = sourceIndices
        self.uuids = uuids
    }

    /// Number of rows.
    public var count: Int { starts.count }

    /// Rows `rows` (clamped to the result) with the same source dictionary, for streaming in chunks (without
    /// ``next``).
    public func chunk(_ rows: Range<Int>) -> SampleQueryResult {
        let rows = rows.clamped(to: 0..<count)
        return SampleQueryResult(
            type: type, unit: unit, sources: sources, starts: Array(starts[rows]), ends: Array(ends[rows]),
            values: Array(values[rows]), sourceIndices: Array(sourceIndices[rows]), uuids: Array(uuids[rows]),
            metadata: metadata.map { Array($0[rows]) })
    }
}

/// Store-wide counts for server-info.
public struct StoreInfo: Hashable, Sendable {
    /// Stored samples per quantity type (short identifier); types without samples are absent.
    public var samplesByType: [String: Int]
    /// Distinct subjects with at least one stored sample.
    public var subjects: Int
    /// Approximate heap bytes of the series, by structure.
    public var memory: StoreMemory

    /// Store counts from their parts.
    public init(samplesByType: [String: Int], subjects: Int, memory: StoreMemory = StoreMemory()) {
        self.samplesByType = samplesByType
        self.subjects = subjects
        self.memory = memory
    }

    /// Approximate heap bytes held by the stored rows and everything beside them but the retry bookkeeping.
    public var approximateBytes: Int { memory.total - memory.index }
    /// Approximate heap bytes of the retry bookkeeping (UUID fingerprints, recent batch ids, sync versions).
    public var indexBytes: Int { memory.index }

    /// Samples of every type together.
    public var totalSamples: Int { samplesByType.values.reduce(0, +) }
}
