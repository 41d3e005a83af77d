import Foundation
import HealthModel

extension HealthStore {
    /// Changes of one subject's samples of a type after `anchor` (HEALTHKIT.md §9), in arrival order: samples
    /// added that match `filter` and samples deleted (UUID, sync identifier and version; a UUID filter applies
    /// to them, dates and sources cannot), at most `limit` of both together (0: no limit), values in `unit`.
    ///
    /// Anchor 0 means from the beginning. Throws ``ErrorCode/anchorExpired`` for an anchor older than a pruned
    /// deletion (or one deleted longer than ``deletionRetention`` ago) or newer than any this store handed out.
    /// Takes the type's read lock; a changed sample arriving later always gets a larger anchor.
    public func changes(
        subject: String, type: QuantityType, filter: SampleFilter = .all, anchor: UInt64, limit: Int = 0,
        unit: HealthUnit? = nil
    ) throws -> ChangeSet {
        let transform = try UnitTransform(type: type, unit: unit)
        try SampleRules.validate(subject: subject)
        let filter = try filter.validated(for: type)
        if limit < 0 { throw HealthError(.invalidArgument, "the limit \(limit) is negative") }
        let cutoff = deletionCutoff()
        return try shard(type).read { state in
            try HealthStore.checkAnchor(
                anchor, series: state.series[subject], last: state.lastAnchor(of: subject), cutoff)
            guard let series = state.series[subject] else {
                return ChangeSet(
                    added: SampleQueryResult(
                        type: type, unit: transform.unit, sources: [], starts: [], ends: [], values: [],
                        sourceIndices: [], uuids: []),
                    deleted: [], anchor: max(anchor, state.lastAnchor(of: subject)), hasMore: false)
            }
            let (arrived, moreArrived) = series.rowsArrived(after: anchor, matching: filter, limit: limit)
            let log = series.changeLog
            let deletions = log.deletions[log.firstDeletion(after: anchor)...].lazy
                .filter { $0.deletedAt >= cutoff && $0.matches(filter) }
            var rows = 0
            var deleted: [DeletedObject] = []
            var nextArrival = 0
            var deletionIterator = deletions.makeIterator()
            var nextDeletion = deletionIterator.next()
            var last = anchor
            while limit == 0 || rows + deleted.count < limit {
                let arrival = nextArrival < arrived.count ? arrived.arrivals[nextArrival] : nil
                if let arrival, nextDeletion.map({ arrival < $0.anchor }) ?? true {
                    rows += 1
                    last = arrival
                    nextArrival += 1
                } else if let deletion = nextDeletion {
                    deleted.append(
                        DeletedObject(
                            uuid: deletion.uuid, syncIdentifier: deletion.syncIdentifier,
                            syncVersion: deletion.syncVersion))
                    last = deletion.anchor
                    nextDeletion = deletionIterator.next()
                } else {
                    break
                }
            }
            let hasMore = nextArrival < arrived.count || moreArrived || nextDeletion != nil
            return ChangeSet(
                added: series.queryResult(decoded: arrived.copy(0..<rows), type: type, unit: transform),
                deleted: deleted,
                anchor: hasMore ? last : max(anchor, state.lastAnchor(of: subject)), hasMore: hasMore)
        }
    }

    /// The time spans of one subject's samples of a type added or deleted after `anchor`, merged, and the anchor
    /// they reach (for live collections: the buckets to recompute). Same anchor checks as ``changes``; with
    /// ``SampleFilter/writer`` set only that writer's samples and deletions count (the HealthKit read rule).
    public func changedSpans(
        subject: String, type: QuantityType, after anchor: UInt64, writer: UInt32? = nil
    ) throws -> ChangedSpans {
        try SampleRules.validate(subject: subject)
        let cutoff = deletionCutoff()
        return try shard(type).read { state in
            try HealthStore.checkAnchor(
                anchor, series: state.series[subject], last: state.lastAnchor(of: subject), cutoff)
            let newest = max(anchor, state.lastAnchor(of: subject))
            guard let series = state.series[subject] else { return ChangedSpans(spans: [], anchor: newest) }
            let arrived = series.rowsArrived(after: anchor, matching: SampleFilter(writer: writer)).rows
            var spans = arrived.starts.indices.map { arrived.starts[$0]...arrived.ends[$0] }
            let log = series.changeLog
            for deletion in log.deletions[log.firstDeletion(after: anchor)...]
            where writer == nil || deletion.writer == writer {
                spans.append(deletion.start...deletion.end)
            }
            return ChangedSpans(spans: HealthStore.merged(spans), anchor: newest)
        }
    }

    /// The newest change anchor handed out for a type (0 before any change); with anchors derived from log
    /// sequences (``init(anchorsFromSequences:)``), the newest of `subject`'s changes of that type (without a
    /// subject: the newest of any subject's, which orders nothing across subjects).
    public func lastAnchor(type: QuantityType, subject: String? = nil) -> UInt64 {
        shard(type).read { state in
            if let subject { return state.lastAnchor(of: subject) }
            return state.subjectAnchors?.newestOfAll ?? state.clock.lastAnchor
        }
    }

    /// Drops deletion records older than ``deletionRetention`` from every series; returns how many. Anchors
    /// older than a dropped record get ``ErrorCode/anchorExpired``. Takes each shard's write lock in turn.
    @discardableResult
    public func pruneDeletions() -> Int {
        let cutoff = deletionCutoff()
        var pruned = 0
        for type in QuantityType.all {
            shard(type).write { state in
                for subject in state.series.keys {
                    pruned += state.series[subject]!.changeLog.prune(deletedBefore: cutoff)
                }
            }
        }
        return pruned
    }

    private func deletionCutoff() -> Timestamp {
        ChangeClock.wallClock().subtractingSaturating(deletionRetention)
    }

    private static func checkAnchor(_ anchor: UInt64, series: Series?, last: UInt64, _ cutoff: Timestamp) throws {
        if anchor > last {
            throw HealthError(
                .anchorExpired, "anchor \(anchor) is newer than any change this server knows (\(last)); resync from 0")
        }
        guard anchor > 0, let series else { return }
        let expired = series.changeLog.expiredThrough(cutoff: cutoff)
        if anchor < expired {
            throw HealthError(
                .anchorExpired,
                "anchor \(anchor) expired: deletions up to anchor \(expired) are past the retention; resync from 0")
        }
    }

    /// Sorted spans with overlapping ones joined.
    static func merged(_ spans: [ClosedRange<Timestamp>]) -> [ClosedRange<Timestamp>] {
        var result: [ClosedRange<Timestamp>] = []
        for span in spans.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, span.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound...max(last.upperBound, span.upperBound)
            } else {
                result.append(span)
            }
        }
        return result
    }
}

extension Series {
    /// The rows whose arrival anchor is greater than `anchor` and that match `filter` (dates as in HEALTHKIT.md
    /// §4, sources, UUIDs, writer), decoded, in anchor order: at most `limit` of them (0: all), and whether more
    /// match. The candidates come a page at a time (``BlockedRows/rowsArrived(after:limit:)``: the blocks holding
    /// the page's anchors, their anchor column alone), and only the page's rows are decoded, so a query with a
    /// limit costs about its page, however far behind its anchor is.
    func rowsArrived(after anchor: UInt64, matching filter: SampleFilter, limit: Int = 0) -> (
        rows: SeriesRows, more: Bool
    ) {
        usage.touch()
        // A page of candidates holds one more than the rows wanted: the extra one tells whether more match.
        let pageSize = limit == 0 ? 0 : limit + 1
        var hint = 0
        // Only a UUID filter names rows here.
        var namer = filter.uuids == nil ? nil : namer
        var result = SeriesRows()
        var cursor = anchor
        while true {
            let (page, morePages) = rows.rowsArrived(after: cursor, limit: pageSize)
            guard let last = page.last else { return (result, false) }
            cursor = last.anchor
            let decoded = decodedRows(page.map(\.row))
            for i in 0..<decoded.count {
                guard filter.date.matches(start: decoded.starts[i], end: decoded.ends[i]) else { continue }
                if filter.sources != nil, !filter.matches(source: sources.infos[Int(decoded.sourceIDs[i])]) {
                    continue
                }
                if let wanted = filter.uuids, !wanted.contains(namer!.uuid(i, of: decoded)) {
                    continue
                }
                if let writer = filter.writer, self.writer(anchor: decoded.arrivals[i], hint: &hint) != writer {
                    continue
                }
                if limit > 0, result.count == limit { return (result, true) }
                result.append(decoded, rows: i..<(i + 1))
            }
            if !morePages { return (result, false) }
        }
    }
}

extension DeletionRecord {
    /// Whether a changes query with `filter` reports this deletion: its UUID and writer filters apply (dates and
    /// sources are not kept for deleted samples).
    func matches(_ filter: SampleFilter) -> Bool {
        if let wanted = filter.uuids, !wanted.contains(uuid) { return false }
        if let writer = filter.writer, self.writer != writer { return false }
        return true
    }
}
