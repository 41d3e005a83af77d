/// A map from change anchors to small values (the index of a row's metadata), sorted by anchor and bit-packed:
/// full chunks of up to ``chunkEntries`` entries keep each anchor as its offset from the chunk's first and each
/// value in the fewest bits the chunk's largest needs, so a run of rows that arrived together costs a byte or two
/// each instead of twelve. The newest entries stay plain until they fill a chunk. Anchors mostly arrive in
/// increasing order, which appends; any other change unpacks the one chunk it touches and packs it again.
struct PackedAnchorMap: Sendable {
    /// Entries per packed chunk (a chunk that grows past twice this is split).
    static let chunkEntries = 1024

    /// A packed run of entries, anchors strictly increasing.
    struct Chunk: Sendable {
        let first: UInt64
        let last: UInt64
        let count: Int
        let offsetBits: Int
        let valueBits: Int
        /// The offsets (anchor less ``first``), then the values, each least significant bit first.
        let words: ContiguousArray<UInt64>

        /// The entries `anchors` (strictly increasing, not empty) and `values`, packed.
        init(anchors: ArraySlice<UInt64>, values: ArraySlice<UInt32>) {
            first = anchors.first!
            last = anchors.last!
            count = anchors.count
            offsetBits = Self.bits(last - first)
            valueBits = Self.bits(UInt64(values.max()!))
            var words = ContiguousArray<UInt64>(
                repeating: 0, count: (count * (offsetBits + valueBits) + 63) / 64 + 1)
            var bit = 0
            for anchor in anchors {
                Self.write(anchor - first, width: offsetBits, at: bit, into: &words)
                bit += offsetBits
            }
            for value in values {
                Self.write(UInt64(value), width: valueBits, at: bit, into: &words)
                bit += valueBits
            }
            self.words = words
        }

        /// Bits that hold `value`.
        static func bits(_ value: UInt64) -> Int { 64 - value.leadingZeroBitCount }

        static func write(_ value: UInt64, width: Int, at bit: Int, into words: inout ContiguousArray<UInt64>) {
            guard width > 0 else { return }
            let (word, shift) = (bit >> 6, bit & 63)
            words[word] |= value << shift
            if shift + width > 64 { words[word + 1] |= value >> (64 - shift) }
        }

        @inline(__always)
        func read(at bit: Int, width: Int) -> UInt64 {
            guard width > 0 else { return 0 }
            let (word, shift) = (bit >> 6, bit & 63)
            var value = words[word] >> shift
            if shift + width > 64 { value |= words[word + 1] << (64 - shift) }
            return width == 64 ? value : value & ((1 << width) - 1)
        }

        /// The anchor of entry `i`.
        @inline(__always)
        func anchor(_ i: Int) -> UInt64 { first + read(at: i * offsetBits, width: offsetBits) }

        /// The value of entry `i`.
        @inline(__always)
        func value(_ i: Int) -> UInt32 {
            UInt32(truncatingIfNeeded: read(at: count * offsetBits + i * valueBits, width: valueBits))
        }

        /// The first entry whose anchor is at least `anchor` (``count`` when none).
        func firstPosition(atLeast anchor: UInt64) -> Int {
            var (low, high) = (0, count)
            while low < high {
                let middle = (low + high) / 2
                if self.anchor(middle) < anchor { low = middle + 1 } else { high = middle }
            }
            return low
        }

        /// Every entry, plain.
        func unpacked() -> (anchors: [UInt64], values: [UInt32]) {
            ((0..<count).map(anchor), (0..<count).map(value))
        }
    }

    private var chunks: [Chunk] = []
    /// The newest entries, plain, all after every chunk's.
    private var tailAnchors: [UInt64] = []
    private var tailValues: [UInt32] = []
    /// Entries held.
    private(set) var count = 0

    /// An empty map.
    init() {}

    /// The entries `anchors` (strictly increasing) and `values`.
    init(anchors: [UInt64], values: [UInt32]) {
        precondition(anchors.count == values.count, "one value per anchor")
        var start = 0
        while anchors.count - start >= Self.chunkEntries {
            let end = start + Self.chunkEntries
            chunks.append(Chunk(anchors: anchors[start..<end], values: values[start..<end]))
            start = end
        }
        tailAnchors = Array(anchors[start...])
        tailValues = Array(values[start...])
        count = anchors.count
    }

    /// The value of `anchor`, if it has one.
    subscript(anchor: UInt64) -> UInt32? {
        let chunk = chunkIndex(holding: anchor)
        if chunk < chunks.count {
            let i = chunks[chunk].firstPosition(atLeast: anchor)
            return i < chunks[chunk].count && chunks[chunk].anchor(i) == anchor ? chunks[chunk].value(i) : nil
        }
        let i = Self.firstPosition(in: tailAnchors, atLeast: anchor)
        return i < tailAnchors.count && tailAnchors[i] == anchor ? tailValues[i] : nil
    }

    /// Gives `anchor` the value `value`.
    mutating func set(_ value: UInt32, anchor: UInt64) {
        let chunk = chunkIndex(holding: anchor)
        if chunk == chunks.count {
            let i = Self.firstPosition(in: tailAnchors, atLeast: anchor)
            if i < tailAnchors.count, tailAnchors[i] == anchor {
                tailValues[i] = value
                return
            }
            tailAnchors.insert(anchor, at: i)
            tailValues.insert(value, at: i)
            count += 1
            if tailAnchors.count == Self.chunkEntries {
                chunks.append(Chunk(anchors: tailAnchors[...], values: tailValues[...]))
                // Let go of the capacity: a series with a few rows with metadata should not keep a chunk's worth.
                tailAnchors.removeAll()
                tailValues.removeAll()
            }
            return
        }
        var (anchors, values) = chunks[chunk].unpacked()
        let i = Self.firstPosition(in: anchors, atLeast: anchor)
        if i < anchors.count, anchors[i] == anchor {
            values[i] = value
        } else {
            anchors.insert(anchor, at: i)
            values.insert(value, at: i)
            count += 1
        }
        replaceChunk(chunk, anchors: anchors, values: values)
    }

    /// Forgets `anchor`, if it has a value.
    mutating func remove(anchor: UInt64) {
        guard self[anchor] != nil else { return }
        remove(anchors: [anchor])
    }

    /// Forgets the anchors in `removed`: only the chunks whose range holds one of them are unpacked.
    mutating func remove(anchors removed: Set<UInt64>) {
        guard !removed.isEmpty, count > 0 else { return }
        let sorted = removed.sorted()
        var chunk = chunks.count - 1
        while chunk >= 0 {
            let next = Self.firstPosition(in: sorted, atLeast: chunks[chunk].first)
            guard next < sorted.count, sorted[next] <= chunks[chunk].last else {
                chunk -= 1
                continue
            }
            let (anchors, values) = chunks[chunk].unpacked()
            let kept = anchors.indices.filter { !removed.contains(anchors[$0]) }
            if kept.count < anchors.count {
                count -= anchors.count - kept.count
                replaceChunk(chunk, anchors: kept.map { anchors[$0] }, values: kept.map { values[$0] })
            }
            chunk -= 1
        }
        let kept = tailAnchors.indices.filter { !removed.contains(tailAnchors[$0]) }
        if kept.count < tailAnchors.count {
            count -= tailAnchors.count - kept.count
            (tailAnchors, tailValues) = (kept.map { tailAnchors[$0] }, kept.map { tailValues[$0] })
        }
    }

    /// Every entry, anchors ascending.
    var entries: [(anchor: UInt64, value: UInt32)] {
        var all: [(anchor: UInt64, value: UInt32)] = []
        all.reserveCapacity(count)
        for chunk in chunks {
            for i in 0..<chunk.count { all.append((chunk.anchor(i), chunk.value(i))) }
        }
        for i in tailAnchors.indices { all.append((tailAnchors[i], tailValues[i])) }
        return all
    }

    /// Calls `body` with every entry, anchors ascending.
    func forEach(_ body: (UInt64, UInt32) throws -> Void) rethrows {
        for chunk in chunks {
            for i in 0..<chunk.count { try body(chunk.anchor(i), chunk.value(i)) }
        }
        for i in tailAnchors.indices { try body(tailAnchors[i], tailValues[i]) }
    }

    /// Heap bytes: the chunks' words and bookkeeping, and the plain entries' capacity.
    var approximateBytes: Int {
        chunks.reduce(chunks.capacity * MemoryLayout<Chunk>.stride) { $0 + 32 + $1.words.capacity * 8 }
            + tailAnchors.capacity * 8 + tailValues.capacity * 4
    }

    /// The chunk whose last anchor is at least `anchor` (``chunks``' count when none: the tail's range).
    private func chunkIndex(holding anchor: UInt64) -> Int {
        if let last = chunks.last, last.last < anchor { return chunks.count }
        var (low, high) = (0, chunks.count)
        while low < high {
            let middle = (low + high) / 2
            if chunks[middle].last < anchor { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Puts `anchors` and `values` in place of chunk `index`: no chunk when empty, two when past twice a chunk.
    private mutating func replaceChunk(_ index: Int, anchors: [UInt64], values: [UInt32]) {
        guard !anchors.isEmpty else {
            chunks.remove(at: index)
            return
        }
        if anchors.count > 2 * Self.chunkEntries {
            let half = anchors.count / 2
            chunks[index] = Chunk(anchors: anchors[..<half], values: values[..<half])
            chunks.insert(Chunk(anchors: anchors[half...], values: values[half...]), at: index + 1)
        } else {
            chunks[index] = Chunk(anchors: anchors[...], values: values[...])
        }
    }

    private static func firstPosition(in anchors: [UInt64], atLeast anchor: UInt64) -> Int {
        if let last = anchors.last, last < anchor { return anchors.count }
        var (low, high) = (0, anchors.count)
        while low < high {
            let middle = (low + high) / 2
            if anchors[middle] < anchor { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
