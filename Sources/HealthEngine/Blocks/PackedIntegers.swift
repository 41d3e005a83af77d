/// A column of unsigned integers bit-packed with patches (frame of reference plus exceptions): the values less
/// their minimum, each in `width` bits, and for the few that need more bits their high bits in a list after.
///
/// Layout: varint `base` (the minimum), byte `width` (0–64), varint `exceptions` (at most the count),
/// `ceil(count × width / 8)` packed bytes (value `i` at bit `i × width`, least significant bit first), then per
/// exception the varint gap to the previous exception's row (the first: its row) and the varint of the bits
/// above `width`. The width minimises the bytes, so a constant column takes three bytes and an outlier costs
/// two or three bytes instead of widening every row. The count is not stored: the block header has it.
///
/// Scaled (``encodeScaled(_:into:)``): the width byte's top bit set, then varint `unit` (≥ 2) before the
/// exceptions, and what is packed is `(value − base) / unit`: an export's durations, whole seconds in
/// microseconds, pack in the bits of their seconds.
enum PackedIntegers {
    /// How ``encode(_:plan:into:)`` packs a column: its base, width and exceptions. Planning writes nothing, and
    /// ``packsSmaller(_:_:than:_:)`` tells which of two candidate columns (deltas or deltas of deltas, values or
    /// their deltas) takes fewer bytes, so a column coder packs only that one.
    struct Plan {
        var base: UInt64
        var width: Int
        var exceptions: Int
        /// The bytes the column takes with every exception's row gap counted as one byte: the exact size
        /// (``size(of:_:)``) is this plus a byte or two for each gap of 128 rows or more.
        var estimate: Int

        init(base: UInt64, width: Int, exceptions: Int, cost: Int) {
            (self.base, self.width, self.exceptions) = (base, width, exceptions)
            estimate = BlockWriter.varintLength(base) + 1 + BlockWriter.varintLength(UInt64(exceptions)) + cost
        }
    }

    /// The plan of `values`: the smallest as base, the width with the fewest bytes.
    static func plan(_ values: UnsafeBufferPointer<UInt64>) -> Plan {
        guard !values.isEmpty else { return Plan(base: 0, width: 0, exceptions: 0, cost: 0) }
        // A column of one value (equal durations, regular starts, one batch's arrivals) packs in zero bits; any
        // other is told apart at its first differing value, and its minimum taken from there.
        let first = values[0]
        var differing = 1
        while differing < values.count, values[differing] == first { differing += 1 }
        if differing == values.count { return Plan(base: first, width: 0, exceptions: 0, cost: 0) }
        var (evenLow, oddLow) = (first, first)
        var i = differing
        while i + 2 <= values.count {
            (evenLow, oddLow) = (min(evenLow, values[i]), min(oddLow, values[i + 1]))
            i += 2
        }
        if i < values.count { evenLow = min(evenLow, values[i]) }
        let base = min(evenLow, oddLow)
        // How many values need each number of bits (0–64), counted in four tables side by side: one table's
        // counter would be incremented by every value of a column of like values, each increment waiting for the
        // last.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: 6 * 65) { tables in
            tables.initialize(repeating: 0)
            let n = values.count
            var i = 0
            while i + 4 <= n {
                tables[64 - (values[i] &- base).leadingZeroBitCount] += 1
                tables[65 + 64 - (values[i + 1] &- base).leadingZeroBitCount] += 1
                tables[130 + 64 - (values[i + 2] &- base).leadingZeroBitCount] += 1
                tables[195 + 64 - (values[i + 3] &- base).leadingZeroBitCount] += 1
                i += 4
            }
            while i < n {
                tables[64 - (values[i] &- base).leadingZeroBitCount] += 1
                i += 1
            }
            // The numbers of bits some value needs, ascending, with how many values need them, as pairs after the
            // four tables.
            var used = 0
            for bits in 0..<65 {
                let count = tables[bits] + tables[65 + bits] + tables[130 + bits] + tables[195 + bits]
                guard count > 0 else { continue }
                (tables[260 + 2 * used], tables[260 + 2 * used + 1]) = (bits, count)
                used += 1
            }
            let histogram = UnsafeBufferPointer(rebasing: tables[260..<260 + 2 * used])
            let (width, cost) = cheapestWidth(histogram, count: n)
            var exceptions = 0
            for pair in stride(from: 0, to: histogram.count, by: 2) where histogram[pair] > width {
                exceptions += histogram[pair + 1]
            }
            return Plan(base: base, width: width, exceptions: exceptions, cost: cost)
        }
    }

    /// Whether `a` packed as `planA` takes fewer bytes than `b` packed as `planB` (each plan its column's
    /// ``plan(_:)``): decided by the estimates when they lie further apart than the gaps could make up, else by
    /// the exact sizes. A column of `count` rows has at most `count / 128` gaps of 128 rows or more, each costing at
    /// most the varint of `count` less the one byte the estimate counts.
    static func packsSmaller(
        _ a: UnsafeBufferPointer<UInt64>, _ planA: Plan, than b: UnsafeBufferPointer<UInt64>, _ planB: Plan
    ) -> Bool {
        func slack(_ count: Int, _ plan: Plan) -> Int {
            min(plan.exceptions, count / 128) * (BlockWriter.varintLength(UInt64(count)) - 1)
        }
        if planA.estimate + slack(a.count, planA) < planB.estimate { return true }
        if planB.estimate + slack(b.count, planB) <= planA.estimate { return false }
        return size(of: a, planA) < size(of: b, planB)
    }

    /// The exact bytes ``encode(_:plan:into:)`` writes for `values` packed as `plan` (their ``plan(_:)``).
    static func size(of values: UnsafeBufferPointer<UInt64>, _ plan: Plan) -> Int {
        var size =
            BlockWriter.varintLength(plan.base) + 1 + BlockWriter.varintLength(UInt64(plan.exceptions))
            + (values.count * plan.width + 7) / 8
        guard plan.exceptions > 0 else { return size }
        let mask: UInt64 = (1 << UInt64(plan.width)) &- 1
        var previous = -1
        for (i, value) in values.enumerated() where (value &- plan.base) > mask {
            size += BlockWriter.varintLength(UInt64(i - previous - 1))
            size += BlockWriter.varintLength((value &- plan.base) >> UInt64(plan.width))
            previous = i
        }
        return size
    }

    /// Appends `values` packed.
    static func encode(_ values: UnsafeBufferPointer<UInt64>, into writer: inout BlockWriter) {
        encode(values, plan: plan(values), into: &writer)
    }

    /// Appends `values` packed as `plan` (their ``plan(_:)``) says.
    static func encode(_ values: UnsafeBufferPointer<UInt64>, plan: Plan, into writer: inout BlockWriter) {
        writer.varint(plan.base)
        writer.byte(UInt8(plan.width))
        writer.varint(UInt64(plan.exceptions))
        appendBits(values, plan: plan, into: &writer)
    }

    /// The width byte's flag of a scaled column.
    static let scaledFlag: UInt8 = 0x80

    /// Appends `values` packed, in multiples of the greatest common divisor of their differences from the
    /// smallest when that takes fewer bytes (the scaled layout, see the type's documentation).
    static func encodeScaled(_ values: UnsafeBufferPointer<UInt64>, into writer: inout BlockWriter) {
        let plain = plan(values)
        let base = plain.base
        guard plain.width > 0 else { return encode(values, plan: plain, into: &writer) }
        var unit: UInt64 = 0
        for value in values {
            var (a, b) = (unit, value &- base)
            while b != 0 { (a, b) = (b, a % b) }
            unit = a
            if unit == 1 { return encode(values, plan: plain, into: &writer) }
        }
        let quotients = values.map { ($0 &- base) / unit }
        quotients.withUnsafeBufferPointer { quotients in
            let scaled = plan(quotients)
            guard scaled.estimate + BlockWriter.varintLength(unit) < plain.estimate else {
                return encode(values, plan: plain, into: &writer)
            }
            writer.varint(base)
            writer.byte(scaledFlag | UInt8(scaled.width))
            writer.varint(unit)
            writer.varint(UInt64(scaled.exceptions))
            appendBits(quotients, plan: scaled, into: &writer)
        }
    }

    /// The packed bits of `values` and their exceptions, as `plan` says (after the header).
    private static func appendBits(_ values: UnsafeBufferPointer<UInt64>, plan: Plan, into writer: inout BlockWriter) {
        let (base, width, exceptions) = (plan.base, plan.width, plan.exceptions)
        guard !values.isEmpty else { return }
        let mask: UInt64 = width == 64 ? ~0 : (1 << UInt64(width)) &- 1
        var packed = [UInt8](repeating: 0, count: (values.count * width + 7) / 8 + 8)
        if width > 0 {
            packed.withUnsafeMutableBytes { out in
                for (i, value) in values.enumerated() {
                    let low = (value &- base) & mask
                    let bit = i * width
                    let byte = bit >> 3
                    let shift = UInt64(bit & 7)
                    var word = UInt64(littleEndian: out.loadUnaligned(fromByteOffset: byte, as: UInt64.self))
                    word |= low << shift
                    out.storeBytes(of: word.littleEndian, toByteOffset: byte, as: UInt64.self)
                    if shift + UInt64(width) > 64 { out[byte + 8] |= UInt8(truncatingIfNeeded: low >> (64 - shift)) }
                }
            }
        }
        packed.removeLast(8)
        writer.append(packed)
        guard exceptions > 0 else { return }
        var previous = -1
        for (i, value) in values.enumerated() where (value &- base) > mask {
            writer.varint(UInt64(i - previous - 1))
            writer.varint((value &- base) >> UInt64(width))
            previous = i
        }
    }

    /// The width with the fewest bytes (the narrowest of equals) and those bytes (packed rows and exceptions, each
    /// gap counted as one byte), given how many values need each number of bits: `histogram` holds (bits,
    /// values) pairs, only for the numbers of bits some value needs, ascending.
    private static func cheapestWidth(_ histogram: UnsafeBufferPointer<Int>, count: Int) -> (width: Int, cost: Int) {
        var best = 64
        var bestCost = Int.max
        for width in 0...64 {
            var cost = (count * width + 7) / 8
            for pair in stride(from: 0, to: histogram.count, by: 2) where histogram[pair] > width {
                cost += histogram[pair + 1] * (1 + (histogram[pair] - width + 6) / 7)
            }
            if cost < bestCost { (best, bestCost) = (width, cost) }
        }
        return (best, bestCost)
    }

    /// Reads `count` values packed by ``encode(_:into:)`` into `out`, which must hold `count` values.
    static func decode(
        _ reader: inout BlockReader, count: Int, into out: UnsafeMutablePointer<UInt64>
    ) throws(BlockDecodingError) {
        let base = try reader.varint()
        let widthByte = try reader.byte()
        var unit: UInt64 = 1
        if widthByte & scaledFlag != 0 {
            unit = try reader.varint()
            guard unit >= 2 else { throw BlockDecodingError("scaled column with unit \(unit)") }
        }
        let width = Int(widthByte & ~scaledFlag)
        guard width <= 64 else { throw BlockDecodingError("bit width \(width) above 64") }
        let exceptions = try reader.count(atMost: count, "exception count")
        let packedBytes = (count * width + 7) / 8
        guard packedBytes <= reader.remaining else { throw BlockDecodingError("packed column truncated") }
        let packed = UnsafeRawBufferPointer(rebasing: reader.base[reader.offset..<reader.offset + packedBytes])
        try reader.skip(packedBytes)
        unpack(packed, width: width, base: unit == 1 ? base : 0, count: count, into: out)
        if exceptions > 0 {
            guard width < 64 else { throw BlockDecodingError("exceptions in a 64-bit column") }
            var row = -1
            for _ in 0..<exceptions {
                let gap = try reader.varint()
                guard gap < UInt64(count - row - 1) else { throw BlockDecodingError("exception row beyond the column") }
                row += Int(gap) + 1
                let high = try reader.unpredictableVarint()
                out[row] = out[row] &+ (high << UInt64(width))
            }
        }
        if unit > 1 {
            for i in 0..<count { out[i] = base &+ unit &* out[i] }
        }
    }

    /// The header of a column packed in zero bits (every value `base` but `exceptions` of them), read past it; for
    /// any other width nil, and `reader` stays where it was (for ``decode(_:count:into:)``). The exceptions follow
    /// as pairs read by ``nextException(_:count:after:)``. Column decoders use it to build their output in one
    /// pass (regular starts, equal durations, mostly-zero values).
    @inline(__always)
    static func sparseHeader(
        _ reader: inout BlockReader, count: Int
    ) throws(BlockDecodingError) -> (base: UInt64, exceptions: Int)? {
        var peek = reader
        let base = try peek.varint()
        guard try peek.byte() == 0 else { return nil }
        let exceptions = try peek.count(atMost: count, "exception count")
        reader = peek
        return (base, exceptions)
    }

    /// The next exception of a zero-bit column after row `row` (-1 for the first): its row and the bits to add to
    /// the base.
    @inline(__always)
    static func nextException(
        _ reader: inout BlockReader, count: Int, after row: Int
    ) throws(BlockDecodingError) -> (row: Int, high: UInt64) {
        let gap = try reader.varint()
        guard gap < UInt64(count - row - 1) else { throw BlockDecodingError("exception row beyond the column") }
        return (row + Int(gap) + 1, try reader.unpredictableVarint())
    }

    /// Unpacks `count` values of `width` bits from `packed` (which holds exactly enough bytes), adding `base`.
    @inline(__always)
    private static func unpack(
        _ packed: UnsafeRawBufferPointer, width: Int, base: UInt64, count: Int, into out: UnsafeMutablePointer<UInt64>
    ) {
        guard width > 0 else {
            out.update(repeating: base, count: count)
            return
        }
        let mask: UInt64 = width == 64 ? ~0 : (1 << UInt64(width)) &- 1
        var i = 0
        if width <= 56, packed.count >= 8 {
            // One unaligned load per value while eight bytes remain from the value's first byte.
            let fastEnd = min(count, ((packed.count - 8) * 8) / width + 1)
            let pointer = packed.baseAddress!
            var bit = 0
            while i < fastEnd {
                let word = UInt64(littleEndian: pointer.loadUnaligned(fromByteOffset: bit >> 3, as: UInt64.self))
                out[i] = ((word >> UInt64(bit & 7)) & mask) &+ base
                bit += width
                i += 1
            }
        }
        while i < count {
            out[i] = (readBits(packed, at: i * width, width: width) & mask) &+ base
            i += 1
        }
    }

    /// `width` bits at bit offset `bit`, byte by byte (the tail of a column, and widths above 56).
    private static func readBits(_ packed: UnsafeRawBufferPointer, at bit: Int, width: Int) -> UInt64 {
        var result: UInt64 = 0
        var taken = 0
        var byte = bit >> 3
        var skip = bit & 7
        while taken < width {
            let available = UInt64(packed[byte]) >> UInt64(skip)
            result |= available << UInt64(taken)
            taken += 8 - skip
            skip = 0
            byte += 1
        }
        return result
    }
}
