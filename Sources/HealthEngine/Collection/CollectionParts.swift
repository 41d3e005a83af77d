import Dispatch
import HealthModel
import Synchronization

extension Series {
    /// Selected rows per part of a collection's sums computed in parts: below twice this, they are computed whole
    /// (handing a part to another thread costs tens of microseconds; 400,000 rows take a millisecond or more).
    static let rowsPerCollectionPart = 400_000
    /// Most parts one collection's sums are computed in. More than two did not pay on two cores (each part reads
    /// its first block and the context of its first group of blocks again, and the parts finish unevenly).
    static let maxCollectionParts = 2

    /// The parts sums over `rows` selected rows are computed in: fixed by the rows alone, never by the machine, so
    /// the same rows give the same sums, bit for bit, on any number of cores.
    static func partCount(rows: Int) -> Int {
        min(maxCollectionParts, rows / rowsPerCollectionPart)
    }

    /// ``collection(of:boundaries:options:style:unit:listEmpty:envelope:parts:fromBlockStart:)`` in `parts` at
    /// once (`DispatchQueue.concurrentPerform`, on as many cores as there are): the buckets split into consecutive
    /// ranges holding about as many selected rows each, every range computed as a collection of its own, their
    /// buckets joined in order. The calling thread runs a part too; it holds the type's read lock for all of them.
    ///
    /// Each range reads the rows that reach into its first bucket before its own, as the whole collection spreads
    /// them when it leaves the bucket before, from the start of their block. So one source's sums are the same,
    /// bit for bit, as computed whole: a bucket gets the same additions in the same order, whatever other buckets
    /// are computed with it. Merged sums read their rows in groups of blocks, which here start where a part starts:
    /// a bucket's merged sum may be added in other pieces than when computed whole and differ from it in its last
    /// bit, as it does between two layouts of the same rows in blocks; with the parts fixed by the rows, the same
    /// rows always give the same sums.
    func collectionInParts(
        _ parts: Int, of selection: Selection, boundaries: BucketBoundaries, options: StatisticsOptions,
        style: AggregationStyle, unit: UnitTransform, listEmpty: Bool, envelope: Int?
    ) -> [Statistics] {
        let ranges = bucketRanges(parts, of: selection, boundaries: boundaries)
        let results = Mutex([[Statistics]](repeating: [], count: ranges.count))
        DispatchQueue.concurrentPerform(iterations: ranges.count) { index in
            let range = ranges[index]
            let part = BucketBoundaries(
                firstBucketNumber: boundaries.firstBucketNumber + range.lowerBound,
                starts: Array(boundaries.starts[range.lowerBound...range.upperBound]))
            let buckets = collection(
                of: selection, boundaries: part, options: options, style: style, unit: unit, listEmpty: listEmpty,
                envelope: envelope, parts: 1, fromBlockStart: true)
            results.withLock { $0[index] = buckets }
        }
        return results.withLock { $0.flatMap { $0 } }
    }

    /// Up to `parts` consecutive ranges of bucket positions covering every bucket, split where the selection's
    /// rows divide into about equal shares (at the bucket holding each share's first row's start).
    func bucketRanges(_ parts: Int, of selection: Selection, boundaries: BucketBoundaries) -> [Range<Int>] {
        var shareStarts: [Int] = []
        var cursor = selection.runs.makeIterator()
        var skipped = 0
        var run = cursor.next()
        for share in 1..<parts {
            // The selected row that starts share number `share`.
            let target = selection.count * share / parts
            while let current = run, skipped + current.count <= target {
                skipped += current.count
                run = cursor.next()
            }
            guard let current = run else { break }
            shareStarts.append(current.lowerBound + (target - skipped))
        }
        guard !shareStarts.isEmpty else { return [0..<boundaries.count] }
        let starts = decodedRows(shareStarts).starts
        var edges = [0]
        for start in starts {
            let position =
                boundaries.bucketIndex(of: start) ?? (start < boundaries.span.lowerBound ? 0 : boundaries.count)
            if position > edges[edges.count - 1], position < boundaries.count { edges.append(position) }
        }
        edges.append(boundaries.count)
        return zip(edges, edges.dropFirst()).map { $0..<$1 }
    }
}
