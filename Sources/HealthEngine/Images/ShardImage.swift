import Foundation
import HealthModel

// Images of shards and series as sealed blocks and tables: what a snapshot writes and start-up restores
// (Sources/HealthStorage/Format/SnapshotCodec.swift encodes them byte for byte).

extension HealthStore {
    /// A consistent image of one type's shard (only the series of the subjects `subjects` accepts: a cluster
    /// partition's), and what `mark` returned while the shard was held: the log position the image is complete up
    /// to. Taken under the read lock in O(series) time (columns are shared copy-on-write, so writers that follow
    /// pay for one copy of the columns they change).
    public func image<Mark>(
        of type: QuantityType, subjects: (String) -> Bool = { _ in true }, marking mark: () -> Mark
    ) -> (ShardImage, Mark) {
        shard(type).read { state in
            let series = state.series.filter { subjects($0.key) }.sorted { $0.key < $1.key }.map {
                SeriesImage($0.value, subject: $0.key)
            }
            // With anchors from sequences the clock holds the last change's anchors, not the newest of all.
            let lastAnchor = max(state.clock.lastAnchor, state.subjectAnchors?.newestOfAll ?? 0)
            return (ShardImage(type: type, series: series, lastAnchor: lastAnchor), mark())
        }
    }

    /// Replaces one type's shard with `image` (start-up, before serving), or with `replacing`, only the series
    /// of the subjects it accepts (a cluster partition's: the others are kept). Throws
    /// ``ErrorCode/internalError`` naming the subject when the image breaks a series invariant; the shard is
    /// then left unchanged.
    public func restore(_ image: ShardImage, replacing subjects: ((String) -> Bool)? = nil) throws {
        var restored: [String: Series] = [:]
        var newest: [String: UInt64] = [:]
        for series in image.series {
            restored[series.subject] = try Series(image: series, type: image.type)
            newest[series.subject] = series.newestAnchor
        }
        let lastAnchor = max(image.lastAnchor, newest.values.max() ?? 0)
        shard(image.type).write { state in
            guard let subjects else {
                state.series = restored
                state.clock.lastAnchor = lastAnchor
                state.subjectAnchors?.replace(newest, where: { _ in true })
                return
            }
            state.series = state.series.filter { !subjects($0.key) }.merging(restored) { _, new in new }
            state.clock.lastAnchor = max(state.clock.lastAnchor, lastAnchor)
            state.subjectAnchors?.replace(newest, where: subjects)
        }
    }
}

/// One subject's series of one type as sealed blocks and tables, for snapshots.
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
    /// The rows in start order as sealed blocks (each block's last start at or before the next one's first;
    /// any sizes): taken from the series as they are, and written to and read from version 7 and 8 files as
    /// they are. Source ids index ``sources``; values are in the canonical unit.
    public var blocks: [SealedBlock]
    /// Longest `end - start` ever stored (at least the longest stored now).
    public var maxDuration: Int64
    /// The source table in id order, and per entry whether its app or device entered samples by hand (its
    /// identity's ``SeriesSources/Identity/userEntered``).
    public var sources: [SourceInfo]
    public var userEnteredSources: [Bool]
    /// The priority order set for the series, if any.
    public var priorityOrder: [SourceInfo]?
    /// Recent batch ids, oldest first.
    public var recentBatches: [RecentBatch]
    /// Sync identifiers, sorted by source key then identifier.
    public var syncHolders: [SyncHolder]
    /// The batches the rows came from, by ascending anchors: each row's UUID and writer.
    public var batches: [AppliedBatch]
    /// Deletion records and the newest pruned anchor.
    public var changeLog: SeriesChangeLog
    /// The metadata of the rows that carry any, by their change anchor (snapshot versions 6 to 8; empty before).
    public var metadata: SeriesMetadata
    /// Whether every block's rows were checked against the engine's invariants when the blocks were read
    /// (``SealedBlock/init(validating:checkingInvariants:decoded:)`` with the check: starts ascending inside a
    /// block, ends at or after starts, instants supported) and their summaries recomputed: restoring the image
    /// then reads only each block's arrival anchors, not every column again.
    public var rowsChecked = false
    /// Whether restoring also marks as entered by hand the sources of rows whose metadata says so (HEALTHKIT.md
    /// §8): set for snapshot files before version 8, whose ``userEnteredSources`` an earlier version decided by the
    /// key `HKMetadataKeyWasUserEntered` alone. An image made from a series holds complete flags. Like
    /// ``rowsChecked``, it says how the image was read and is not part of its equality.
    public var userEnteredFromMetadata = false

    /// An image from its parts, the rows as columns of equal lengths sorted by start (older snapshot versions,
    /// tests): they are sealed in blocks of ``blockRows`` rows. The change anchor of each row (`arrivals`) names
    /// its entry in `batches`.
    public init(
        subject: String, starts: ContiguousArray<Timestamp>, ends: ContiguousArray<Timestamp>,
        values: ContiguousArray<Double>, sourceIDs: ContiguousArray<UInt16>, arrivals: ContiguousArray<UInt64>,
        batches: [AppliedBatch], maxDuration: Int64, sources: [SourceInfo], userEnteredSources: [Bool],
        priorityOrder: [SourceInfo]?, recentBatches: [RecentBatch], syncHolders: [SyncHolder],
        changeLog: SeriesChangeLog = SeriesChangeLog(), metadata: SeriesMetadata = SeriesMetadata()
    ) {
        let rows = SeriesRows(starts: starts, ends: ends, values: values, sourceIDs: sourceIDs, arrivals: arrivals)
        var blocks: [SealedBlock] = []
        var first = 0
        while first < rows.count {
            let last = min(first + Self.blockRows, rows.count)
            blocks.append(SealedBlock(encoding: rows, range: first..<last))
            first = last
        }
        self.init(
            subject: subject, blocks: blocks, batches: batches, maxDuration: maxDuration, sources: sources,
            userEnteredSources: userEnteredSources, priorityOrder: priorityOrder, recentBatches: recentBatches,
            syncHolders: syncHolders, changeLog: changeLog, metadata: metadata)
    }

    /// An image from its parts, the rows in sealed blocks (snapshot decoding).
    public init(
        subject: String, blocks: [SealedBlock], batches: [AppliedBatch], maxDuration: Int64, sources: [SourceInfo],
        userEnteredSources: [Bool], priorityOrder: [SourceInfo]?, recentBatches: [RecentBatch],
        syncHolders: [SyncHolder], changeLog: SeriesChangeLog = SeriesChangeLog(),
        metadata: SeriesMetadata = SeriesMetadata()
    ) {
        self.metadata = metadata
        self.subject = subject
        self.blocks = blocks
        self.batches = batches
        self.maxDuration = maxDuration
        self.sources = sources
        self.userEnteredSources = userEnteredSources
        self.priorityOrder = priorityOrder
        self.recentBatches = recentBatches
        self.syncHolders = syncHolders
        self.changeLog = changeLog
    }

    /// The same tables with other rows, given as columns (nil: this image's column), sealed as
    /// ``init(subject:starts:ends:values:sourceIDs:arrivals:batches:maxDuration:sources:userEnteredSources:priorityOrder:recentBatches:syncHolders:changeLog:metadata:)``
    /// seals them (tests build images that break the rules from it).
    public func replacingRows(
        starts: ContiguousArray<Timestamp>? = nil, ends: ContiguousArray<Timestamp>? = nil,
        values: ContiguousArray<Double>? = nil, sourceIDs: ContiguousArray<UInt16>? = nil,
        arrivals: ContiguousArray<UInt64>? = nil
    ) -> SeriesImage {
        let rows = decodedRows
        return SeriesImage(
            subject: subject, starts: starts ?? rows.starts, ends: ends ?? rows.ends, values: values ?? rows.values,
            sourceIDs: sourceIDs ?? rows.sourceIDs, arrivals: arrivals ?? rows.arrivals, batches: batches,
            maxDuration: maxDuration, sources: sources, userEnteredSources: userEnteredSources,
            priorityOrder: priorityOrder, recentBatches: recentBatches, syncHolders: syncHolders,
            changeLog: changeLog, metadata: metadata)
    }

    /// Rows per block when an image is made from columns.
    public static let blockRows = 4096

    /// Number of samples.
    public var count: Int { blocks.reduce(0) { $0 + $1.count } }

    /// The newest change anchor the series holds: of its last batch, its last deletion, or the deletions pruned.
    var newestAnchor: UInt64 {
        max(
            batches.last.map { $0.anchors.upperBound - 1 } ?? 0, changeLog.deletions.last?.anchor ?? 0,
            changeLog.prunedThrough)
    }

    /// Every row, decoded.
    private var decodedRows: SeriesRows {
        var rows = SeriesRows()
        rows.reserve(count)
        for block in blocks { block.appendRows(to: &rows) }
        return rows
    }

    /// The rows' starts, decoded (as are the other columns below: tests and tools, not the snapshot path).
    public var starts: ContiguousArray<Timestamp> { decodedRows.starts }
    public var ends: ContiguousArray<Timestamp> { decodedRows.ends }
    public var values: ContiguousArray<Double> { decodedRows.values }
    public var sourceIDs: ContiguousArray<UInt16> { decodedRows.sourceIDs }
    /// The change anchor of each row; it names the row's entry in ``batches``.
    public var arrivals: ContiguousArray<UInt64> { decodedRows.arrivals }

    /// Every column, from one decode of the blocks (each property above decodes all of them).
    public var columns:
        (
            starts: ContiguousArray<Timestamp>, ends: ContiguousArray<Timestamp>, values: ContiguousArray<Double>,
            sourceIDs: ContiguousArray<UInt16>, arrivals: ContiguousArray<UInt64>
        )
    {
        let rows = decodedRows
        return (rows.starts, rows.ends, rows.values, rows.sourceIDs, rows.arrivals)
    }

    /// Equal rows (however they are cut into blocks, values bit for bit) and equal tables.
    public static func == (a: SeriesImage, b: SeriesImage) -> Bool {
        guard a.subject == b.subject, a.maxDuration == b.maxDuration, a.sources == b.sources,
            a.userEnteredSources == b.userEnteredSources, a.priorityOrder == b.priorityOrder,
            a.recentBatches == b.recentBatches, a.syncHolders == b.syncHolders, a.batches == b.batches,
            a.changeLog == b.changeLog, a.metadata == b.metadata, a.count == b.count
        else { return false }
        let (x, y) = (a.decodedRows, b.decodedRows)
        return x.starts == y.starts && x.ends == y.ends && x.values.map(\.bitPattern) == y.values.map(\.bitPattern)
            && x.sourceIDs == y.sourceIDs && x.arrivals == y.arrivals
    }

    /// Hashes the tables and the row count (equal images hash alike).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(subject)
        hasher.combine(count)
        hasher.combine(maxDuration)
        hasher.combine(sources)
        hasher.combine(batches)
        hasher.combine(changeLog)
    }

    /// The image of `series`: its sealed blocks as they are, and its head sealed as one more block.
    init(_ series: Series, subject: String) {
        var blocks = series.rows.blocks
        let head = series.rows.head
        if head.count > 0 { blocks.append(SealedBlock(encoding: head, range: 0..<head.count)) }
        self.init(
            subject: subject, blocks: blocks, batches: Array(series.batches.entries), maxDuration: series.maxDuration,
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
    /// The series of `type` an image describes; throws ``ErrorCode/internalError`` when it breaks an invariant.
    init(image: SeriesImage, type: QuantityType) throws {
        func broken(_ what: String) -> HealthError {
            HealthError(.internalError, "series of subject \"\(image.subject)\" in the snapshot: \(what)")
        }
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
        // An older file's flags miss sources whose manual samples carry the `HKWasUserEntered` of exports (an
        // earlier version read only `HKMetadataKeyWasUserEntered`): the rows the metadata table marks as entered by
        // hand mark their sources, as replaying their batches would (HEALTHKIT.md §8). Newer images need no scan
        // of the table, which holds a dictionary for every row with metadata.
        let userEnteredAnchors =
            image.userEnteredFromMetadata
            ? Set(image.metadata.entries.filter { SeriesSources.marksUserEntered($0.metadata) }.map(\.anchor)) : []
        // Every block is decoded once and its rows checked; the blocks themselves are kept as they are. Blocks
        // whose rows were checked when they were read need only their summaries and arrival anchors here (and
        // their source ids when a row of several sources' block is marked as entered by hand).
        var maxDuration: Int64 = 0
        var arrivalSpans: [ClosedRange<UInt64>] = []
        var anchors = Set<UInt64>()
        var firstRow = 0
        var previousStart = Timestamp.min
        var hint = 0
        let scratch = BlockScratch(capacity: image.blocks.reduce(0) { max($0, $1.count) })
        let checked = image.rowsChecked
        for block in image.blocks {
            let sourcesNeeded = !userEnteredAnchors.isEmpty && block.summary.sources.count > 1
            block.decode(
                into: !checked
                    ? scratch.all
                    : BlockBuffers(sourceIDs: sourcesNeeded ? scratch.sourceIDs : nil, arrivals: scratch.arrivals))
            let c = scratch.rows(block.count)
            if checked {
                let summary = block.summary
                if summary.firstStart < previousStart { throw broken("starts not sorted at row \(firstRow)") }
                previousStart = summary.lastStart
                if Int(summary.sources.last ?? 0) >= image.sources.count {
                    throw broken("a row of the block at row \(firstRow) has no source")
                }
                maxDuration = max(maxDuration, summary.longestDuration)
            }
            var oldest = UInt64.max
            var newest: UInt64 = 0
            for i in 0..<block.count {
                let row = firstRow + i
                if !checked {
                    if c.starts[i] < previousStart { throw broken("starts not sorted at row \(row)") }
                    previousStart = c.starts[i]
                    if c.ends[i] < c.starts[i] { throw broken("row \(row) ends before it starts") }
                    if !SupportedInstants.contains(c.starts[i]) || !SupportedInstants.contains(c.ends[i]) {
                        throw broken("row \(row) lies outside \(SupportedInstants.description)")
                    }
                    if Int(c.sourceIDs[i]) >= image.sources.count { throw broken("row \(row) has no source") }
                    // Both instants lie within SupportedInstants (checked above): the difference cannot overflow.
                    maxDuration = max(maxDuration, c.ends[i] - c.starts[i])
                }
                guard let entry = batches.entryIndex(holding: c.arrivals[i], hint: hint) else {
                    throw broken("row \(row) has anchor \(c.arrivals[i]) of no batch")
                }
                hint = entry
                oldest = min(oldest, c.arrivals[i])
                newest = max(newest, c.arrivals[i])
                if !image.metadata.isEmpty { anchors.insert(c.arrivals[i]) }
                if !userEnteredAnchors.isEmpty, userEnteredAnchors.contains(c.arrivals[i]) {
                    let id = sourcesNeeded || !checked ? c.sourceIDs[i] : block.summary.sources[0]
                    sources.markUserEntered(id: Int(id))
                }
            }
            arrivalSpans.append(oldest...newest)
            firstRow += block.count
        }
        guard image.maxDuration >= maxDuration else { throw broken("maxDuration below a stored duration") }
        if let stray = image.metadata.anchorsWithMetadata.first(where: { !anchors.contains($0) }) {
            throw broken("metadata of anchor \(stray), which no row has")
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
            type: type, blockedRows: BlockedRows(sealed: image.blocks, arrivalSpans: arrivalSpans), batches: batches,
            maxDuration: image.maxDuration, sources: sources, ledger: ledger, metadata: image.metadata)
        changeLog = image.changeLog
    }
}
