import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// The choices the column encoders make while sealing (a packed column's width, a value column's decimal
/// exponent and mantissas), checked against plain restatements of their definitions on random columns.
@Suite("Column encoding choices")
struct ColumnEncodingTests {
    /// Bytes a column takes packed in `width` bits over `base` (exception rows' gaps counted exactly).
    static func bytes(_ values: [UInt64], base: UInt64, width: Int) -> Int {
        let mask: UInt64 = width == 64 ? ~0 : (1 << UInt64(width)) &- 1
        var exceptions = 0
        var exceptionBytes = 0
        var previous = -1
        for (i, value) in values.enumerated() where (value &- base) > mask {
            exceptions += 1
            exceptionBytes += BlockWriter.varintLength(UInt64(i - previous - 1))
            exceptionBytes += BlockWriter.varintLength((value &- base) >> UInt64(width))
            previous = i
        }
        return BlockWriter.varintLength(base) + 1 + BlockWriter.varintLength(UInt64(exceptions))
            + (values.count * width + 7) / 8 + exceptionBytes
    }

    /// A column of like values with a few outliers of random sizes, or a column of one value.
    static func column(using random: inout SplitMix64) -> [UInt64] {
        let count = Int.random(in: 1...600, using: &random)
        let base = UInt64.random(in: 0...(1 << Int.random(in: 0...63, using: &random)), using: &random)
        let spread = UInt64(1) << UInt64(Int.random(in: 0...20, using: &random))
        let outliers = Double.random(in: 0..<0.2, using: &random)
        return (0..<count).map { _ in
            if Double.random(in: 0..<1, using: &random) < outliers {
                return base
                    &+ UInt64.random(
                        in: 0...(UInt64.max >> UInt64(Int.random(in: 0...63, using: &random))), using: &random)
            }
            return base &+ UInt64.random(in: 0..<spread, using: &random)
        }
    }

    @Test("a packed column's plan takes its minimum as base, counts its exceptions, and no width packs it smaller")
    func planIsTheCheapest() {
        var random = SplitMix64(seed: TestSeed.value(2_024))
        for _ in 0..<300 {
            let values = Self.column(using: &random)
            let plan = values.withUnsafeBufferPointer { PackedIntegers.plan($0) }
            #expect(plan.base == values.min())
            let mask: UInt64 = plan.width == 64 ? ~0 : (1 << UInt64(plan.width)) &- 1
            #expect(plan.exceptions == values.filter { ($0 &- plan.base) > mask }.count)
            let planned = values.withUnsafeBufferPointer { PackedIntegers.size(of: $0, plan) }
            #expect(planned == Self.bytes(values, base: plan.base, width: plan.width))
            // The estimate the plan minimises counts one byte per gap; the exact size may differ by the gaps
            // longer than 127 rows, which a column of at most 600 rows has few of.
            let cheapest = (0...64).map { Self.bytes(values, base: plan.base, width: $0) }.min()!
            #expect(planned <= cheapest + plan.exceptions, "plan \(plan) for \(values.count) values")
            if values.allSatisfy({ $0 == values[0] }) { #expect(plan.width == 0 && plan.exceptions == 0) }
            // The estimate counts each gap as one byte: never above the exact size, below it only by long gaps.
            #expect(plan.estimate <= planned && planned <= plan.estimate + values.count / 128 * 2)
        }
    }

    @Test("of two candidate columns the one packing into fewer bytes is chosen, as exact sizes would choose")
    func smallerCandidate() {
        var random = SplitMix64(seed: TestSeed.value(5))
        for _ in 0..<400 {
            var a = Self.column(using: &random)
            // Candidates of equal length, as a column coder's are; sometimes equal, sometimes one a sparse copy.
            var b = Self.column(using: &random)
            b = (0..<a.count).map { b[$0 % b.count] }
            if Bool.random(using: &random) { a = b.map { Bool.random(using: &random) ? $0 : 0 } }
            let chosen = a.withUnsafeBufferPointer { x in
                b.withUnsafeBufferPointer { y in
                    PackedIntegers.packsSmaller(x, PackedIntegers.plan(x), than: y, PackedIntegers.plan(y))
                }
            }
            let exact = a.withUnsafeBufferPointer { x in
                b.withUnsafeBufferPointer { y in
                    PackedIntegers.size(of: x, PackedIntegers.plan(x))
                        < PackedIntegers.size(of: y, PackedIntegers.plan(y))
                }
            }
            #expect(chosen == exact)
        }
    }

    @Test("decimal values take the smallest exponent that gives every value back bit for bit, with its mantissas")
    func decimalMantissas() {
        var random = SplitMix64(seed: TestSeed.value(77))
        for _ in 0..<300 {
            let digits = Int.random(in: 0...6, using: &random)
            let scale = ValueColumn.powers[digits]
            let values = (0..<Int.random(in: 1...300, using: &random)).map { _ in
                Double(Int64.random(in: -50_000_000...50_000_000, using: &random)) / scale
            }
            var mantissas = [Int64](repeating: 0, count: values.count)
            let exponent = values.withUnsafeBufferPointer { v in
                mantissas.withUnsafeMutableBufferPointer { ValueColumn.decimalMantissas(v, into: $0) }
            }
            // The smallest exponent at which every value is an exact mantissa, computed the plain way.
            let expected = (0..<ValueColumn.powers.count).first { e in
                values.allSatisfy { value in
                    let m = (value * ValueColumn.powers[e]).rounded()
                    return abs(m) < ValueColumn.exactLimit
                        && (e == 0 ? m : m / ValueColumn.powers[e]).bitPattern == value.bitPattern
                }
            }
            #expect(exponent == expected, "\(values.prefix(4))")
            guard let exponent else { continue }
            #expect(exponent <= digits)
            for (value, m) in zip(values, mantissas) {
                #expect(m == Int64((value * ValueColumn.powers[exponent]).rounded()))
            }
        }
        // Halves round away from zero, as `rounded()` does; values no exponent makes whole are refused.
        #expect(ValueColumn.mantissa(2.5, exponent: 0) == nil)
        #expect(ValueColumn.mantissa(-0.25, exponent: 2) == -25)
        #expect(ValueColumn.mantissa(0.125, exponent: 3) == 125)
        #expect(ValueColumn.mantissa(-0.0, exponent: 0) == nil)
        #expect(ValueColumn.mantissa(.pi, exponent: 6) == nil)
        #expect(ValueColumn.mantissa(9_007_199_254_740_992, exponent: 0) == nil)
    }

    /// `values` written by ``PackedIntegers/encodeScaled(_:into:)``, and what decoding gives back.
    static func scaledRoundTrip(_ values: [UInt64]) throws -> (bytes: [UInt8], decoded: [UInt64]) {
        var writer = BlockWriter()
        values.withUnsafeBufferPointer { PackedIntegers.encodeScaled($0, into: &writer) }
        let bytes = writer.bytes
        let decoded = try bytes.withUnsafeBytes { raw in
            var reader = BlockReader(raw)
            let out = try [UInt64](unsafeUninitializedCapacity: values.count) { buffer, count in
                try PackedIntegers.decode(&reader, count: values.count, into: buffer.baseAddress!)
                count = values.count
            }
            #expect(reader.remaining == 0)
            return out
        }
        return (bytes, decoded)
    }

    @Test("durations in whole seconds pack in the bits of their seconds, scaled; anything packs back bit for bit")
    func scaledColumns() throws {
        var random = SplitMix64(seed: 17)
        // An export's step intervals: 30 s to 10 min, whole seconds, in microseconds.
        let seconds = (0..<4_096).map { _ in UInt64.random(in: 30...600, using: &random) * 1_000_000 }
        let (scaled, decoded) = try Self.scaledRoundTrip(seconds)
        #expect(decoded == seconds)
        #expect(scaled[BlockWriter.varintLength(seconds.min()!)] & PackedIntegers.scaledFlag != 0)
        #expect(scaled.count < 4_096 * 10 / 8 + 16)
        var plain = BlockWriter()
        seconds.withUnsafeBufferPointer { PackedIntegers.encode($0, into: &plain) }
        #expect(plain.bytes.count > 2 * scaled.count)
        // Random columns, with and without a common divisor and outliers, come back as they went.
        for _ in 0..<300 {
            let unit = [1, 2, 1_000, 1_000_000, 60_000_000][Int.random(in: 0...4, using: &random)]
            let values = Self.column(using: &random).map { $0 &* UInt64(unit) }
            #expect(try Self.scaledRoundTrip(values).decoded == values)
        }
    }

    @Test("a scaled column's unit below 2 is damage")
    func scaledUnitChecked() {
        // base 0, scaled width 1, unit 1, no exceptions, one byte of bits.
        let bytes: [UInt8] = [0, PackedIntegers.scaledFlag | 1, 1, 0, 0xFF]
        #expect(throws: BlockDecodingError.self) {
            try bytes.withUnsafeBytes { raw in
                var reader = BlockReader(raw)
                var out = [UInt64](repeating: 0, count: 8)
                try out.withUnsafeMutableBufferPointer {
                    try PackedIntegers.decode(&reader, count: 8, into: $0.baseAddress!)
                }
            }
        }
    }
}
