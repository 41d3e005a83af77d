import HealthModel

/// One bucket of a statistics collection: `[start, end)`, numbered from the anchor.
public struct Bucket: Hashable, Sendable {
    /// The bucket number k: bucket 0 starts at the anchor, negative numbers lie before it.
    public var number: Int
    /// First instant of the bucket (inclusive).
    public var start: Timestamp
    /// First instant after the bucket (exclusive); the next bucket's start.
    public var end: Timestamp

    /// A bucket numbered `number` covering `[start, end)`.
    public init(number: Int, start: Timestamp, end: Timestamp) {
        self.number = number
        self.start = start
        self.end = end
    }
}

/// Consecutive buckets of a collection, computed once per query: every bucket from the one holding the range's
/// first instant to the one holding its last, empty ones included (HealthKit's "enumerate from/to").
///
/// Position `i` (0-based, the collection index) is bucket number `firstBucketNumber + i`, covering
/// `[starts[i], starts[i + 1])`. An immutable value, safe to share between threads.
public struct BucketBoundaries: RandomAccessCollection, Hashable, Sendable {
    /// The bucket number k of position 0.
    public let firstBucketNumber: Int
    /// Bucket starts in increasing order, then the last bucket's end: one more entry than there are buckets.
    /// Never decreasing; two equal entries mark an empty bucket (a local day a zone skipped entirely).
    public let starts: [Timestamp]

    /// Boundaries whose position 0 is bucket `firstBucketNumber`; `starts` needs at least two entries.
    init(firstBucketNumber: Int, starts: [Timestamp]) {
        precondition(starts.count >= 2, "boundaries need a start and an end")
        self.firstBucketNumber = firstBucketNumber
        self.starts = starts
    }

    /// Always 0.
    public var startIndex: Int { 0 }
    /// The number of buckets.
    public var endIndex: Int { starts.count - 1 }

    /// The bucket at `position` (0-based).
    public subscript(position: Int) -> Bucket {
        Bucket(number: firstBucketNumber + position, start: starts[position], end: starts[position + 1])
    }

    /// The instants the buckets cover together: from the first start to the last end.
    public var span: Range<Timestamp> { starts[0]..<starts[starts.count - 1] }

    /// The position of the bucket holding `instant` (an instant on a boundary belongs to the later bucket),
    /// or nil when `instant` lies outside ``span``. Binary search: O(log n), no allocation.
    public func bucketIndex(of instant: Timestamp) -> Int? {
        guard instant >= starts[0], instant < starts[starts.count - 1] else { return nil }
        // The first boundary after `instant`, minus one.
        var low = 1
        var high = starts.count - 1
        while low < high {
            let middle = low + (high - low) / 2
            if starts[middle] <= instant { low = middle + 1 } else { high = middle }
        }
        return low - 1
    }
}
