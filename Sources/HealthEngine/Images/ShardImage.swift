import Foundation
import HealthModel

// Images of shards and series as plain columns and tables: what a snapshot writes and start-up restores
// (Sources/HealthStorage/Format/SnapshotCodec.swift encodes them byte for byte).

extension HealthStore {
    /// A consistent image of one type's shard, and what `mark` returned while the shard was held: the log
    /// position the image is complete up to. Taken under the read lock in O(series) time (columns are shared
    /// copy-on-write, so writers that follow pay for one copy of the columns they change).
    public func image<Mark>(of type: QuantityType, marking mark: () -> Mark) -> (ShardImage, Mark) {
        shard(type).read { state in
            let series = state.series.sorted { $0.key < $1.key }.map { SeriesImage($0.value, subject: $0.key) }
            return (ShardImage(type: type, series: series, lastAnchor: state.clock.lastAnchor), mark())
        }
    }

    /// Replaces one type's shard with `image` (start-up, before serving). Throws ``ErrorCode/internalError``
    /// naming the subject when the image breaks a series invariant; the shard is then left unchanged.
    public func restore(_ image: ShardImage) throws {
        var restored: [String: Series] = [:]
        var lastAnchor = image.lastAnchor
        for series in image.series {
            restored[series.subject] = try Series(image: series)
            lastAnchor = max(
                lastAnchor, series.batches.last.map { $0.anchors.upperBound - 1 } ?? 0,
                series.changeLog.deletions.last?.anchor ?? 0)
        }
        shard(image.type).write { state in
            state.series = restored
            state.clock.lastAnchor = lastAnchor
        }
    }
}

/// One subject's series of one type as plain columns and tables, for snapshots.
public struct SeriesImage: Hashable, Sendable {
    /// A batch id the series remembers, with the result it reported.
    public struct RecentBatch: Hashable, Sendable {
        public var batchID: UInt64
        /// The identity that sent it; `nil` when an old snapshot (before version 5) did not record it.
        public var writer: UInt32?
        public var inserted: Int
        public var duplicates: Int
        /// A remembered batch.
        public init(batchID: UInt64, writer: UInt32?, inserted: Int, duplicates: Int) {
            self.batchID = batchID
            self.writer = writer
            self.inserted = inserted
            self.duplicates = duplicates
        }
    }

    /// A sync identifier (scoped to a source identity key) and the sample holding it.
    public struct SyncHolder: Hashable, Sendable {
        public var sourceKey: String
        public var identifier: String
        public var version: Int64
        public var uuid: UUID
        public var start: Timestamp
        /// A holder from its parts.
        public init(sourceKey: String, identifier: String, version: Int64, uuid: UUID, start: Timestamp) {
            self.sourceKey = sourceKey
            self.identifier = identifier
            self.version = version
            self.uuid = uuid
            self.start = start
        }
    }

    public var subject: String
    /// Columns sorted by start; values in the canonical unit; source ids index ``sources``.
    public var starts: ContiguousArray<Timestamp>
    public var ends: ContiguousArray<Timestamp>
    public var values: ContiguousArray<Double>
    public var sourceIDs: ContiguousArray<UInt16>
    /// Longest `end - start` ever stored (at least the longest stored now).
    public var maxDuration: Int64
    /// The source table in id order, and per entry whether its app or device entered samples by hand.
    public var sources: [SourceInfo]
    public var userEnteredSources: [Bool]
    /// The priority order set for the series, if any.
    public var priorityOrder: [SourceInfo]?
    /// Recent batch ids, oldest first.
    public var recentBatches: [RecentBatch]
    /// Sync identifiers, sorted by source key then identifier.
    public var syncHolders: [SyncHolder]
    /// The change anchor of each row (parallel to ``starts``); it names the row's entry in ``batches``.
    public var arrivals: ContiguousArray<UInt64>
    /// The batches the rows came from, by ascending anchors: each row's UUID and writer.
    public var batches: [AppliedBatch]
    /// Deletion records and the newest pruned anchor.
    public var changeLog: SeriesChangeLog
    /// The metadata of the rows that carry any, by their change anchor (snapshot versions 6 and 7; empty before).
    public var metadata: [UInt64: [String: MetadataValue]]

    /// An image from its parts (snapshot decoding).
    public init(
        subject: String, starts: ContiguousArray<Timestamp>, ends: ContiguousArray<Timestamp>,
        values: ContiguousArray<Double>, sourceIDs: ContiguousArray<UInt16>, arrivals: ContiguousArray<UInt64>,
        batches: [AppliedBatch], maxDuration: Int64, sources: [SourceInfo], userEnteredSources: [Bool],
        priorityOrder: [SourceInfo]?, recentBatches: [RecentBatch], syncHolders: [SyncHolder],
        changeLog: SeriesChangeLog = SeriesChangeLog(), metadata: [UInt64: [String: MetadataValue]] = [:]
    ) {
        self.metadata = metadata
        self.subject = subject
        self.starts = starts
        self.ends = ends
        self.values = values
        self.sourceIDs = sourceIDs
        self.arrivals = arrivals
        self.batches = batches
        self.maxDuration = maxDuration
        self.sources = sources
        self.userEnteredSources = userEnteredSources
        self.priorityOrder = priorityOrder
        self.recentBatches = recentBatches
        self.syncHolders = syncHolders
        self.changeLog = changeLog
    }

    /// Number of samples.
    public var count: Int { starts.count }

    init(_ series: Series, subject: String) {
        let rows = series.allRows
        self.init(
            subject: subject, starts: rows.starts, ends: rows.ends, values: rows.values, sourceIDs: rows.sourceIDs,
            arrivals: rows.arrivals, batches: Array(series.batches.entries), maxDuration: series.maxDuration,
            sources: series.sources.infos,
            userEnteredSources: series.sources.infos.indices.map { series.sources.isUserEntered(id: $0) },
            priorityOrder: series.sources.explicitOrder,
            recentBatches: series.ledger.recentBatchOrder.map { key in
                let outcome = series.ledger.recentBatches[key]!
                return RecentBatch(
                    batchID: key.id, writer: key.writer, inserted: outcome.inserted, duplicates: outcome.duplicates)
            },
            syncHolders: series.ledger.syncEntries.map { key, entry in
                SyncHolder(
                    sourceKey: key.sourceKey, identifier: key.identifier, version: entry.version, uuid: entry.uuid,
                    start: entry.start)
            }.sorted { ($0.sourceKey, $0.identifier) < ($1.sourceKey, $1.identifier) },
            changeLog: series.changeLog, metadata: series.metadata)
    }
}

/// Every series of one quantity type, for snapshots.
public struct ShardImage: Hashable, Sendable {
    public var type: QuantityType
    /// Sorted by subject.
    public var series: [SeriesImage]
    /// The newest change anchor of the type (anchors keep growing across restarts).
    public var lastAnchor: UInt64

    /// An image from its parts.
    public init(type: QuantityType, series: [SeriesImage], lastAnchor: UInt64 = 0) {
        self.type = type
        self.series = series
        self.lastAnchor = lastAnchor
    }

    /// Samples in every series.
    public var sampleCount: Int { series.reduce(0) { $0 + $1.count } }
}

extension Series {
    /// The series an image describes; throws ``ErrorCode/internalError`` when it breaks an invariant.
    init(image: SeriesImage) throws {
        func broken(_ what: String) -> HealthError {
            HealthError(.internalError, "series of subject \"\(image.subject)\" in the snapshot: \(what)")
        }
        let n = image.starts.count
        guard image.ends.count == n, image.values.count == n, image.sourceIDs.count == n, image.arrivals.count == n
        else { throw broken("columns have different lengths") }
        guard let batches = BatchTable(checking: image.batches) else {
            throw broken("batch anchors overlap, go back or do not match their UUIDs")
        }
        guard image.sources.count <= SeriesSources.capacity, image.userEnteredSources.count == image.sources.count,
            Set(image.sources).count == image.sources.count
        else { throw broken("bad source table") }
        var sources = SeriesSources()
        for (info, userEntered) in zip(image.sources, image.userEnteredSources) {
            _ = sources.intern(info, userEntered: userEntered)
        }
        if let order = image.priorityOrder { sources.restorePriority(order) }
        var maxDuration: Int64 = 0
        for row in 0..<n {
            if row > 0, image.starts[row] < image.starts[row - 1] { throw broken("starts not sorted at row \(row)") }
            if image.ends[row] < image.starts[row] { throw broken("row \(row) ends before it starts") }
            if !SupportedInstants.contains(image.starts[row]) || !SupportedInstants.contains(image.ends[row]) {
                throw broken("row \(row) lies outside \(SupportedInstants.description)")
            }
            if Int(image.sourceIDs[row]) >= image.sources.count { throw broken("row \(row) has no source") }
            if batches.entryIndex(holding: image.arrivals[row]) == nil {
                throw broken("row \(row) has anchor \(image.arrivals[row]) of no batch")
            }
            // Both instants lie within SupportedInstants (checked above), so the difference cannot overflow.
            maxDuration = max(maxDuration, image.ends[row] - image.starts[row])
        }
        guard image.maxDuration >= maxDuration else { throw broken("maxDuration below a stored duration") }
        if !image.metadata.isEmpty {
            let anchors = Set(image.arrivals)
            if let stray = image.metadata.keys.first(where: { !anchors.contains($0) }) {
                throw broken("metadata of anchor \(stray), which no row has")
            }
        }
        var ledger = SeriesLedger()
        for batch in image.recentBatches {
            ledger.record(
                batch: .init(id: batch.batchID, writer: batch.writer),
                .init(inserted: batch.inserted, duplicates: batch.duplicates))
        }
        for holder in image.syncHolders {
            ledger.setSync(
                .init(sourceKey: holder.sourceKey, identifier: holder.identifier),
                .init(version: holder.version, uuid: holder.uuid, start: holder.start))
        }
        self.init(
            sortedRows: SeriesRows(
                starts: image.starts, ends: image.ends, values: image.values, sourceIDs: image.sourceIDs,
                arrivals: image.arrivals),
            batches: batches, maxDuration: image.maxDuration, sources: sources, ledger: ledger,
            metadata: image.metadata)
        changeLog = image.changeLog
    }
}
