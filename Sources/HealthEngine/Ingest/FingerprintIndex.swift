/// The fingerprints of a series' kept UUIDs, a multiset of 48-bit values (``FingerprintMultiset/folded(_:)``) in
/// about 5 bytes each: most in a sorted, bit-packed run (``SortedFingerprints``), the newest in a small hash
/// multiset, and removals from the run in another. When the newest outgrow an eighth of the run, the three merge
/// into a new run in one linear pass (only the newest are sorted), so an insert costs amortised O(1) and a lookup
/// a hash probe and a search of one bucket.
///
/// As ``FingerprintMultiset``: ``contains(_:)`` never answers false for a value inserted and not removed, and
/// answers true for another about once in 2^48 / n lookups.
struct FingerprintIndex: Sendable {
    private var sorted = SortedFingerprints()
    private var recent = FingerprintMultiset()
    private var removed = FingerprintMultiset()

    /// Occurrences held.
    var count: Int { sorted.count + recent.count - removed.count }

    /// Whether `value` was inserted more often than removed (or shares its 48 bits with one that was).
    func contains(_ value: UInt64) -> Bool {
        if recent.contains(value) { return true }
        let held = sorted.occurrences(of: FingerprintMultiset.folded(value))
        return held > 0 && held > removed.occurrences(of: value)
    }

    /// Adds an occurrence of `value`.
    mutating func insert(_ value: UInt64) {
        recent.insert(value)
        if recent.count > max(4096, sorted.count / 8) { merge() }
    }

    /// Adds occurrences of every value of `values` at once (a series restored from a snapshot).
    mutating func insert(contentsOf values: [UInt64]) {
        var folded = values.map(FingerprintMultiset.folded)
        folded.sort()
        sorted = SortedFingerprints(merging: sorted.values(), folded)
        if recent.count > 0 || removed.count > 0 { merge() }
    }

    /// Removes one occurrence of `value` if there is one.
    mutating func remove(_ value: UInt64) {
        if recent.contains(value) {
            recent.remove(value)
        } else if sorted.occurrences(of: FingerprintMultiset.folded(value)) > removed.occurrences(of: value) {
            removed.insert(value)
            if removed.count > max(4096, sorted.count / 8) { merge() }
        }
    }

    /// The run, less the removals, merged with the newest: a new run.
    private mutating func merge() {
        var added = recent.foldedValues()
        added.sort()
        var gone = removed.foldedValues()
        gone.sort()
        var kept: [UInt64] = []
        kept.reserveCapacity(sorted.count - gone.count)
        var g = 0
        for value in sorted.values() {
            while g < gone.count, gone[g] < value { g += 1 }
            if g < gone.count, gone[g] == value {
                g += 1
                continue
            }
            kept.append(value)
        }
        sorted = SortedFingerprints(merging: kept, added)
        recent = FingerprintMultiset()
        removed = FingerprintMultiset()
    }

    /// Heap bytes: the run and both multisets.
    var approximateBytes: Int { sorted.approximateBytes + recent.approximateBytes + removed.approximateBytes }
}

/// Sorted 48-bit values (repeats allowed), bucketed by their top `bucketBits` bits: each bucket's first position
/// (32 bits each), and each value's remaining bits packed at `48 − bucketBits` a value. With about two values a
/// bucket, a value costs the 48 bits less log2 of the count, and a lookup searches a bucket or two.
struct SortedFingerprints: Sendable {
    private(set) var count = 0
    private var bucketBits = 0
    /// Position of each bucket's first value, and the count after the last (empty when there are no values).
    private var starts: ContiguousArray<UInt32> = []
    /// The values' low `48 − bucketBits` bits, packed least significant bit first.
    private var packed: ContiguousArray<UInt64> = []

    private var remainderBits: Int { 48 - bucketBits }

    /// No values.
    init() {}

    /// The values of two ascending lists.
    init(merging a: [UInt64], _ b: [UInt64]) {
        count = a.count + b.count
        guard count > 0 else { return }
        precondition(count < Int(UInt32.max), "too many fingerprints")
        bucketBits = max(0, min(32, (Int.bitWidth - count.leadingZeroBitCount) - 2))
        let bits = remainderBits
        let mask: UInt64 = (1 << UInt64(bits)) - 1
        starts = ContiguousArray(repeating: 0, count: (1 << bucketBits) + 1)
        packed = ContiguousArray(repeating: 0, count: (count * bits + 63) / 64 + 1)
        var (i, j, position) = (0, 0, 0)
        while i < a.count || j < b.count {
            let value: UInt64
            if j == b.count || (i < a.count && a[i] <= b[j]) {
                value = a[i]
                i += 1
            } else {
                value = b[j]
                j += 1
            }
            starts[Int(value >> UInt64(bits)) + 1] += 1
            let bit = position * bits
            let (word, shift) = (bit >> 6, bit & 63)
            packed[word] |= (value & mask) << UInt64(shift)
            if shift + bits > 64 { packed[word + 1] |= (value & mask) >> UInt64(64 - shift) }
            position += 1
        }
        for bucket in 1..<starts.count { starts[bucket] += starts[bucket - 1] }
    }

    /// The low bits of value `i`.
    @inline(__always)
    private func remainder(_ i: Int) -> UInt64 {
        let bits = remainderBits
        let bit = i * bits
        let (word, shift) = (bit >> 6, bit & 63)
        var value = packed[word] >> UInt64(shift)
        if shift + bits > 64 { value |= packed[word + 1] << UInt64(64 - shift) }
        return value & ((1 << UInt64(bits)) - 1)
    }

    /// How many times `value` (48 bits) is held.
    func occurrences(of value: UInt64) -> Int {
        guard count > 0 else { return 0 }
        let bits = remainderBits
        let bucket = Int(value >> UInt64(bits))
        let low = value & ((1 << UInt64(bits)) - 1)
        var found = 0
        for i in Int(starts[bucket])..<Int(starts[bucket + 1]) {
            let held = remainder(i)
            if held == low { found += 1 } else if held > low { break }
        }
        return found
    }

    /// Every value, ascending.
    func values() -> [UInt64] {
        guard count > 0 else { return [] }
        var all: [UInt64] = []
        all.reserveCapacity(count)
        for bucket in 0..<(starts.count - 1) {
            let high = UInt64(bucket) << UInt64(remainderBits)
            for i in Int(starts[bucket])..<Int(starts[bucket + 1]) { all.append(high | remainder(i)) }
        }
        return all
    }

    /// Heap bytes.
    var approximateBytes: Int { starts.capacity * 4 + packed.capacity * 8 }
}
