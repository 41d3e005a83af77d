import HealthModel

/// One buffer per column, allocated once with room for `capacity` rows and reused to decode block after block
/// (``SealedBlock/decode(into:)`` writes into ``all``).
public final class BlockScratch {
    /// Rows each buffer holds.
    public let capacity: Int
    public let starts: UnsafeMutablePointer<Timestamp>
    public let ends: UnsafeMutablePointer<Timestamp>
    public let values: UnsafeMutablePointer<Double>
    public let sourceIDs: UnsafeMutablePointer<UInt16>
    public let arrivals: UnsafeMutablePointer<UInt64>

    /// Buffers for `capacity` rows (at least one).
    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
        starts = .allocate(capacity: self.capacity)
        ends = .allocate(capacity: self.capacity)
        values = .allocate(capacity: self.capacity)
        sourceIDs = .allocate(capacity: self.capacity)
        arrivals = .allocate(capacity: self.capacity)
    }

    deinit {
        starts.deallocate()
        ends.deallocate()
        values.deallocate()
        sourceIDs.deallocate()
        arrivals.deallocate()
    }

    /// `scratch` when it has room for `count` rows, else a new scratch for them, kept in `scratch`: one scratch
    /// decodes blocks of different sizes in turn, allocated once it is needed.
    static func reused(_ scratch: inout BlockScratch?, for count: Int) -> BlockScratch {
        if let scratch, scratch.capacity >= count { return scratch }
        let fresh = BlockScratch(capacity: count)
        scratch = fresh
        return fresh
    }

    /// Every column.
    public var all: BlockBuffers {
        BlockBuffers(starts: starts, ends: ends, values: values, sourceIDs: sourceIDs, arrivals: arrivals)
    }

    /// The first `count` decoded rows, read-only.
    public func rows(_ count: Int) -> BlockColumns { rows(0..<count) }

    /// The rows `range`, read-only.
    func rows(_ range: Range<Int>) -> BlockColumns {
        let (first, count) = (range.lowerBound, range.count)
        return BlockColumns(
            starts: UnsafeBufferPointer(start: starts + first, count: count),
            ends: UnsafeBufferPointer(start: ends + first, count: count),
            values: UnsafeBufferPointer(start: values + first, count: count),
            sourceIDs: UnsafeBufferPointer(start: sourceIDs + first, count: count),
            arrivals: UnsafeBufferPointer(start: arrivals + first, count: count))
    }
}
