import Dispatch
import Foundation
import HealthModel
import Synchronization

extension Series {
    /// Selected rows per part of a collection computed on several cores: below twice this, one core does it all
    /// (handing a part to another thread costs tens of microseconds; 400,000 rows take a millisecond or more).
    static let rowsPerCollectionPart = 400_000

    /// The parts a collection over `rows` selected rows is computed in: one per core, each of at least
    /// ``rowsPerCollectionPart`` rows (W2's five years of per-minute steps make two on two cores).
    static func partCount(rows: Int) -> Int {
        min(ProcessInfo.processInfo.activeProcessorCount, rows / rowsPerCollectionPart)
    }

    /// ``collection(of:boundaries:options:style:unit:listEmpty:envelope:parts:)`` in `parts` at once, each on a
    /// core of its own: the buckets split into consecutive ranges holding about as many selected rows each, every
    /// range computed as a collection of its own, their buckets joined in order.
    ///
    /// For one source's sums, the same buckets bit for bit as the collection computed whole: a bucket's sum gets
    /// the same additions in the same order, whatever other buckets are computed with it (the rows of earlier
    /// buckets that reach into a range's first bucket are spread into it first, as the whole collection spreads
    /// them when it leaves the bucket before). A merge of several sources reads its rows in groups of blocks
    /// that a split would move, which can change a sum's last bit: such collections are not split. The calling
    /// thread runs one part; it holds the type's read lock for all of them.
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
                envelope: envelope, parts: 1)
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
