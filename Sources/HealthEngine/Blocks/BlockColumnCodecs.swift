import HealthModel

// The five columns of a sealed block, each encoded on its own (layouts in Protocol/STORAGE.md, "Sealed
// blocks"). Encoders take any bits and round-trip them exactly; decoders never trap on damaged bytes.

/// A column of `count` values, value `i` being `value(i)`, written once (no zeroing first: sealing makes several
/// such scratch columns per block).
@inline(__always)
func filledColumn<T>(count: Int, _ value: (Int) -> T) -> [T] {
    [T](unsafeUninitializedCapacity: count) { buffer, initialized in
        for i in 0..<count { buffer.initializeElement(at: i, to: value(i)) }
        initialized = count
    }
}

/// Start times: the first is in the block header; the rest as deltas, or deltas of deltas when that is smaller
/// (regular sampling makes every delta of delta zero), packed; either divided by the deltas' greatest common
/// divisor (the unit) when that packs smaller still: instants of whole seconds (every export's) then cost the bits
/// of their seconds, not of their microseconds.
enum StartColumn {
    static let deltaMode: UInt8 = 0
    static let deltaOfDeltaMode: UInt8 = 1
    /// Modes 0 and 1 with a unit: `varint unit` (≥ 2) after the mode, every delta a multiple of it.
    static let scaledDeltaMode: UInt8 = 2
    static let scaledDeltaOfDeltaMode: UInt8 = 3

    static func encode(_ starts: UnsafeBufferPointer<Timestamp>, into writer: inout BlockWriter) {
        let n = starts.count
        let deltas = filledColumn(count: n - 1) { UInt64(bitPattern: starts[$0 + 1] &- starts[$0]) }
        var best = Candidate(mode: deltaMode, values: deltas, unit: 1)
        best.consider(Candidate(mode: deltaOfDeltaMode, values: secondDeltas(deltas, unit: 1), unit: 1))
        // Scaled columns only where packing takes bits (regular columns pack in none and keep mode 1, which
        // decodes in one pass). Instants of years 0001–9999 keep every delta far below 2^62, where the signed
        // deltas of deltas stay multiples of the unit; other bits are kept unscaled.
        if best.plan.width > 0, deltas.allSatisfy({ $0 < 1 << 62 }) {
            let unit = commonDivisor(deltas)
            if unit > 1 {
                best.consider(Candidate(mode: scaledDeltaMode, values: deltas.map { $0 / unit }, unit: unit))
                best.consider(
                    Candidate(mode: scaledDeltaOfDeltaMode, values: secondDeltas(deltas, unit: unit), unit: unit))
            }
        }
        writer.byte(best.mode)
        if best.mode >= scaledDeltaMode { writer.varint(best.unit) }
        best.values.withUnsafeBufferPointer { PackedIntegers.encode($0, plan: best.plan, into: &writer) }
    }

    /// One way to write the column: its mode, values, unit and the bytes they take.
    private struct Candidate {
        var mode: UInt8
        var values: [UInt64]
        var unit: UInt64
        var plan: PackedIntegers.Plan
        var size: Int

        init(mode: UInt8, values: [UInt64], unit: UInt64) {
            (self.mode, self.values, self.unit) = (mode, values, unit)
            (plan, size) = values.withUnsafeBufferPointer { packed in
                let plan = PackedIntegers.plan(packed)
                return (plan, PackedIntegers.size(of: packed, plan))
            }
            if mode >= StartColumn.scaledDeltaMode { size += BlockWriter.varintLength(unit) }
        }

        /// Becomes `other` if that takes fewer bytes.
        mutating func consider(_ other: Candidate) {
            if other.size < size { self = other }
        }
    }

    /// The zigzagged deltas of `deltas` (the first against 0), each divided by `unit` (which divides them all).
    private static func secondDeltas(_ deltas: [UInt64], unit: UInt64) -> [UInt64] {
        let signedUnit = Int64(bitPattern: unit)
        return filledColumn(count: deltas.count) { i in
            zigZag(Int64(bitPattern: deltas[i] &- (i == 0 ? 0 : deltas[i - 1])) / signedUnit)
        }
    }

    /// The greatest common divisor of `values` (1 when they share none, or are all zero).
    static func commonDivisor(_ values: [UInt64]) -> UInt64 {
        var divisor: UInt64 = 0
        var previous: UInt64 = 0
        // Runs of one delta (regular sampling) cost one step each.
        for value in values where value != 0 && value != previous {
            previous = value
            var (a, b) = (divisor, value)
            while b != 0 { (a, b) = (b, a % b) }
            divisor = a
            if divisor == 1 { return 1 }
        }
        return max(divisor, 1)
    }

    static func decode(
        _ reader: inout BlockReader, first: Timestamp, count: Int, into out: UnsafeMutablePointer<Timestamp>
    ) throws(BlockDecodingError) {
        let mode = try reader.byte()
        guard mode <= scaledDeltaOfDeltaMode else { throw BlockDecodingError("start mode \(mode)") }
        var unit: Int64 = 1
        if mode >= scaledDeltaMode {
            let raw = try reader.varint()
            guard raw >= 2, raw <= UInt64(Int64.max) else { throw BlockDecodingError("start unit \(raw)") }
            unit = Int64(raw)
        }
        out[0] = first
        if mode == deltaOfDeltaMode, try decodeRegular(&reader, first: first, count: count, into: out) { return }
        try out.advanced(by: 1).withMemoryRebound(to: UInt64.self, capacity: count - 1) {
            (packed) throws(BlockDecodingError) in
            try PackedIntegers.decode(&reader, count: count - 1, into: packed)
        }
        var start = first
        if mode == deltaMode || mode == scaledDeltaMode {
            for i in 1..<count {
                start = start &+ out[i] &* unit
                out[i] = start
            }
        } else {
            var delta: Int64 = 0
            for i in 1..<count {
                delta = delta &+ unZigZag(UInt64(bitPattern: out[i])) &* unit
                start = start &+ delta
                out[i] = start
            }
        }
    }
}

extension StartColumn {
    /// Deltas of deltas packed in zero bits with a zero base (regular sampling: the delta changes only at the
    /// exceptions) decoded in one pass, each stretch of equal deltas as `start + k × delta` with no chain of
    /// dependent adds. Returns false, having read nothing, for any other column.
    @inline(__always)
    fileprivate static func decodeRegular(
        _ reader: inout BlockReader, first: Timestamp, count: Int, into out: UnsafeMutablePointer<Timestamp>
    ) throws(BlockDecodingError) -> Bool {
        // A non-zero base (deltas that change at every row) is not a regular column: decode it the usual way.
        var probe = reader
        guard try probe.varint() == 0, let (_, exceptions) = try PackedIntegers.sparseHeader(&reader, count: count - 1)
        else { return false }
        // Rows 1... of `out` are the packed rows 0...; rows before `filled` are done, the last at `start`.
        var filled = 1
        var start = first
        var delta: Int64 = 0
        var packedRow = -1
        for _ in 0..<exceptions {
            let (row, high) = try PackedIntegers.nextException(&reader, count: count - 1, after: packedRow)
            packedRow = row
            // Rows up to the exception's keep the delta: start + k × delta, no chain of dependent adds.
            let end = row + 1
            var k: Int64 = 1
            for i in filled..<end {
                out[i] = start &+ k &* delta
                k &+= 1
            }
            if end > filled { start = out[end - 1] }
            delta = delta &+ unZigZag(high)
            start = start &+ delta
            out[end] = start
            filled = end + 1
        }
        var k: Int64 = 1
        for i in filled..<count {
            out[i] = start &+ k &* delta
            k &+= 1
        }
        return true
    }
}

/// Durations (`end - start`), packed: a column of equal durations takes three bytes.
enum DurationColumn {
    static func encode(_ rows: BlockColumns, into writer: inout BlockWriter) {
        let durations = filledColumn(count: rows.count) { UInt64(bitPattern: rows.ends[$0] &- rows.starts[$0]) }
        durations.withUnsafeBufferPointer { PackedIntegers.encodeScaled($0, into: &writer) }
    }

    /// Decodes the ends, given the decoded starts.
    static func decode(
        _ reader: inout BlockReader, starts: UnsafePointer<Timestamp>, count: Int,
        into out: UnsafeMutablePointer<Timestamp>
    ) throws(BlockDecodingError) {
        // Equal durations (but a few): the ends in one pass.
        if let (base, exceptions) = try PackedIntegers.sparseHeader(&reader, count: count) {
            let duration = Int64(bitPattern: base)
            var filled = 0
            var row = -1
            for _ in 0..<exceptions {
                let (next, high) = try PackedIntegers.nextException(&reader, count: count, after: row)
                row = next
                for i in filled..<row { out[i] = starts[i] &+ duration }
                out[row] = starts[row] &+ Int64(bitPattern: base &+ high)
                filled = row + 1
            }
            for i in filled..<count { out[i] = starts[i] &+ duration }
            return
        }
        try out.withMemoryRebound(to: UInt64.self, capacity: count) { (packed) throws(BlockDecodingError) in
            try PackedIntegers.decode(&reader, count: count, into: packed)
        }
        for i in 0..<count { out[i] = starts[i] &+ out[i] }
    }
}

/// Values: whole numbers, or decimals with up to six digits after the point, as integers (`value × 10^e`),
/// directly or as deltas, whichever is smaller; any other values as the XOR of each value's bits with the
/// previous value's, shifted right by the trailing zero bits all share.
enum ValueColumn {
    static let decimalMode: UInt8 = 0
    static let decimalDeltaMode: UInt8 = 1
    static let xorMode: UInt8 = 2
    /// Powers of ten that ``decimalMantissas(_:into:)`` tries, each exact in a `Double`.
    static let powers: [Double] = [1, 10, 100, 1000, 10000, 100_000, 1_000_000]
    /// Integers beyond ±2^53 are not all exact doubles.
    static let exactLimit = 9_007_199_254_740_992.0

    static func encode(_ values: UnsafeBufferPointer<Double>, into writer: inout BlockWriter) {
        var exponent: Int?
        let mantissas = [Int64](unsafeUninitializedCapacity: values.count) { buffer, count in
            // Whatever the search leaves in the buffer is read only when it found an exponent.
            buffer.initialize(repeating: 0)
            exponent = decimalMantissas(values, into: buffer)
            count = values.count
        }
        if let exponent {
            encodeDecimal(mantissas, exponent: exponent, into: &writer)
        } else {
            encodeXOR(values, into: &writer)
        }
    }

    /// `value × 10^exponent` when that is an integer from which `value` comes back bit for bit.
    @inline(__always) static func mantissa(_ value: Double, exponent: Int) -> Int64? {
        // Whole numbers (steps, heart rate): the truncation, when it gives the value back, is what rounding would
        // find (negative zero gives back positive zero, so it is none).
        if exponent == 0 {
            guard abs(value) < exactLimit else { return nil }
            let whole = Int64(value)
            return Double(whole).bitPattern == value.bitPattern ? whole : nil
        }
        let scaled = value * powers[exponent]
        guard abs(scaled) < exactLimit else { return nil }
        // Rounded half away from zero, as `rounded()` does, without its call into the C library: the fraction
        // left after truncating is exact for any double below 2^53.
        var mantissa = Int64(scaled)
        let fraction = scaled - Double(mantissa)
        if fraction >= 0.5 {
            mantissa += 1
        } else if fraction <= -0.5 {
            mantissa -= 1
        }
        return (Double(mantissa) / powers[exponent]).bitPattern == value.bitPattern ? mantissa : nil
    }

    /// The smallest exponent that makes every value a ``mantissa(_:exponent:)``, with each value's mantissa at it
    /// in `out` (as many places as values); nil when there is none (`out` then holds anything). The exponent only
    /// grows from value to value: each value is tried at the exponent the values before it needed, and at the end
    /// the values found at a smaller exponent are tried again at the last one.
    static func decimalMantissas(_ values: UnsafeBufferPointer<Double>, into out: UnsafeMutableBufferPointer<Int64>)
        -> Int?
    {
        var exponent = 0
        // Values before this index have their mantissa at a smaller exponent than `exponent`.
        var settled = 0
        for i in 0..<values.count {
            while true {
                if let m = mantissa(values[i], exponent: exponent) {
                    out[i] = m
                    break
                }
                exponent += 1
                if exponent == powers.count { return nil }
                settled = i
            }
        }
        for i in 0..<settled {
            guard let m = mantissa(values[i], exponent: exponent) else { return nil }
            out[i] = m
        }
        return exponent
    }

    private static func encodeDecimal(_ mantissas: [Int64], exponent: Int, into writer: inout BlockWriter) {
        let direct = filledColumn(count: mantissas.count) { zigZag(mantissas[$0]) }
        let deltas = filledColumn(count: mantissas.count) { i in
            zigZag(mantissas[i] &- (i == 0 ? 0 : mantissas[i - 1]))
        }
        // Only the smaller of the two is packed.
        direct.withUnsafeBufferPointer { plain in
            deltas.withUnsafeBufferPointer { delta in
                let (plainPlan, deltaPlan) = (PackedIntegers.plan(plain), PackedIntegers.plan(delta))
                let useDeltas = PackedIntegers.packsSmaller(delta, deltaPlan, than: plain, plainPlan)
                writer.byte(useDeltas ? decimalDeltaMode : decimalMode)
                writer.byte(UInt8(exponent))
                PackedIntegers.encode(
                    useDeltas ? delta : plain, plan: useDeltas ? deltaPlan : plainPlan, into: &writer)
            }
        }
    }

    private static func encodeXOR(_ values: UnsafeBufferPointer<Double>, into writer: inout BlockWriter) {
        var xors = [UInt64](repeating: 0, count: values.count)
        var previous: UInt64 = 0
        var shift = 64
        for (i, value) in values.enumerated() {
            xors[i] = value.bitPattern ^ previous
            previous = value.bitPattern
            if xors[i] != 0 { shift = min(shift, xors[i].trailingZeroBitCount) }
        }
        if shift == 64 { shift = 0 }
        for i in xors.indices { xors[i] >>= UInt64(shift) }
        writer.byte(xorMode)
        writer.byte(UInt8(shift))
        xors.withUnsafeBufferPointer { PackedIntegers.encode($0, into: &writer) }
    }

    static func decode(
        _ reader: inout BlockReader, count: Int, into out: UnsafeMutablePointer<Double>
    ) throws(BlockDecodingError) {
        let mode = try reader.byte()
        guard mode <= xorMode else { throw BlockDecodingError("value mode \(mode)") }
        let parameter = Int(try reader.byte())
        guard parameter < (mode == xorMode ? 64 : powers.count) else {
            throw BlockDecodingError("value parameter \(parameter)")
        }
        // A mostly-one-value column (W1 steps: zeros, walking minutes as exceptions) is decoded like the others,
        // not filled in between its exceptions: that takes fewer instructions but a short fill of unpredictable
        // length per exception, which is slower on such data.
        // The column is decoded as bit patterns in place, each slot holding a valid Double once done.
        try out.withMemoryRebound(to: UInt64.self, capacity: count) { (bits) throws(BlockDecodingError) in
            try PackedIntegers.decode(&reader, count: count, into: bits)
            switch mode {
            case xorMode:
                var previous: UInt64 = 0
                let shift = UInt64(parameter)
                for i in 0..<count {
                    previous ^= bits[i] << shift
                    bits[i] = previous
                }
            case decimalMode where parameter == 0:
                for i in 0..<count { bits[i] = Double(unZigZag(bits[i])).bitPattern }
            case decimalMode:
                let power = powers[parameter]
                for i in 0..<count { bits[i] = (Double(unZigZag(bits[i])) / power).bitPattern }
            default:
                let power = powers[parameter]
                var m: Int64 = 0
                for i in 0..<count {
                    m = m &+ unZigZag(bits[i])
                    bits[i] = (parameter == 0 ? Double(m) : Double(m) / power).bitPattern
                }
            }
        }
    }
}

/// Source ids as runs: varint run count, then per run the varint id and the varint length.
enum SourceColumn {
    static func encode(_ ids: UnsafeBufferPointer<UInt16>, into writer: inout BlockWriter) {
        guard !ids.isEmpty else {
            writer.varint(0)
            return
        }
        var runs = 1
        for i in 1..<ids.count where ids[i] != ids[i - 1] { runs += 1 }
        writer.varint(UInt64(runs))
        var first = 0
        for i in 1...ids.count where i == ids.count || ids[i] != ids[i - 1] {
            writer.varint(UInt64(ids[first]))
            writer.varint(UInt64(i - first))
            first = i
        }
    }

    static func decode(
        _ reader: inout BlockReader, count: Int, into out: UnsafeMutablePointer<UInt16>
    ) throws(BlockDecodingError) {
        let runs = try reader.count(atMost: count, "source run count")
        var row = 0
        for _ in 0..<runs {
            let id = try reader.varint()
            guard id <= UInt64(UInt16.max) else { throw BlockDecodingError("source id \(id) exceeds \(UInt16.max)") }
            let length = try reader.varint()
            guard length <= UInt64(count - row) else {
                throw BlockDecodingError("source run length \(length) exceeds \(count - row)")
            }
            // Sources that interleave row by row make runs of one or two rows: stored directly, not by a call.
            let end = row + Int(length)
            while row < end {
                out[row] = UInt16(truncatingIfNeeded: id)
                row += 1
            }
        }
        guard row == count else { throw BlockDecodingError("source runs cover \(row) of \(count) rows") }
    }
}

/// Arrival anchors: the first as a varint, then the zig-zagged deltas packed (a batch's rows arrive with
/// consecutive anchors, so a block from one batch packs them in zero bits).
enum ArrivalColumn {
    static func encode(_ arrivals: UnsafeBufferPointer<UInt64>, into writer: inout BlockWriter) {
        writer.varint(arrivals[0])
        let deltas = filledColumn(count: arrivals.count - 1) {
            zigZag(Int64(bitPattern: arrivals[$0 + 1] &- arrivals[$0]))
        }
        deltas.withUnsafeBufferPointer { PackedIntegers.encode($0, into: &writer) }
    }

    static func decode(
        _ reader: inout BlockReader, count: Int, into out: UnsafeMutablePointer<UInt64>
    ) throws(BlockDecodingError) {
        out[0] = try reader.varint()
        try PackedIntegers.decode(&reader, count: count - 1, into: out.advanced(by: 1))
        for i in 1..<count { out[i] = out[i - 1] &+ UInt64(bitPattern: unZigZag(out[i])) }
    }
}
