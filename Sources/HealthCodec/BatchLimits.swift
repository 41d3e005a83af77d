/// The most a decoded ``HealthModel/SampleBatch`` may hold; ``SampleBatchCodec`` checks every count against these
/// (and against the bytes left) before allocating.
public struct BatchLimits: Hashable, Sendable {
    /// Most rows in one batch.
    public var maxRows: Int
    /// Most entries in the source dictionary.
    public var maxSources: Int
    /// Longest string (subject, type, unit, source field, metadata key or value), in UTF-8 bytes.
    public var maxStringBytes: Int
    /// Most metadata entries on one row.
    public var maxMetadataEntriesPerRow: Int

    /// Limits for an insert request: 1,048,576 rows, 4,096 sources, 4 KiB strings, 128 metadata entries a row.
    public static let `default` = BatchLimits()

    /// Limits with the given maxima; every argument defaults to ``default``'s value.
    public init(
        maxRows: Int = 1 << 20, maxSources: Int = 4_096, maxStringBytes: Int = 4_096,
        maxMetadataEntriesPerRow: Int = 128
    ) {
        self.maxRows = maxRows
        self.maxSources = maxSources
        self.maxStringBytes = maxStringBytes
        self.maxMetadataEntriesPerRow = maxMetadataEntriesPerRow
    }
}

/// How the value column of an encoded batch is written (the byte after the flags).
public enum ValueEncoding: UInt8, Sendable, CaseIterable {
    /// Each value's 8 IEEE 754 bytes, little-endian.
    case raw = 0
    /// Each value's bit pattern XOR the previous one's (0 before the first), byte-swapped, as a varint: repeated
    /// values take one byte, values differing only in sign, exponent and top mantissa bits take two or three.
    case xor = 1
    /// Every value is an integer of magnitude at most 2^53 (and not −0): zig-zag varints of the difference from
    /// the previous value (0 before the first).
    case integerDelta = 2

    /// The encoding the codec picks for `values`: ``integerDelta`` when every value is an exactly representable
    /// integer, else the smaller of ``xor`` and ``raw``.
    public static func best(for values: [Double]) -> ValueEncoding {
        if values.allSatisfy(isExactInteger) { return .integerDelta }
        var xorBytes = 0
        var previous: UInt64 = 0
        for value in values {
            xorBytes += Varint.length((value.bitPattern ^ previous).byteSwapped)
            previous = value.bitPattern
        }
        return xorBytes < 8 * values.count ? .xor : .raw
    }

    /// Largest magnitude ``integerDelta`` carries: every integer up to it is exact in a Double.
    static let maxExactInteger: Double = 9_007_199_254_740_992

    /// Whether `value` round-trips through `Int64` bit-exactly (so not −0, NaN or beyond ±2^53).
    @inline(__always)
    static func isExactInteger(_ value: Double) -> Bool {
        value.magnitude <= maxExactInteger && value.rounded(.towardZero) == value
            && !(value == 0 && value.sign == .minus)
    }
}
