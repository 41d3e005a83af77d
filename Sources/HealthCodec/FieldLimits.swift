/// The caps the shared field decoders apply before allocating: entries per list and bytes per string.
///
/// HealthWire's `MessageLimits` is one (a peer's limits); the storage formats use ``FieldCaps/storage``.
public protocol FieldLimits: Sendable {
    /// Largest number of entries in a counted list (strings, UUIDs, sources).
    var maxListEntries: Int { get }
    /// Longest string, in UTF-8 bytes.
    var maxStringBytes: Int { get }
}

/// Fixed ``FieldLimits``.
public struct FieldCaps: FieldLimits, Hashable {
    /// Largest number of entries in a counted list.
    public var maxListEntries: Int
    /// Longest string, in UTF-8 bytes.
    public var maxStringBytes: Int

    /// Caps of `maxListEntries` entries per list and `maxStringBytes` bytes per string.
    public init(maxListEntries: Int, maxStringBytes: Int) {
        self.maxListEntries = maxListEntries
        self.maxStringBytes = maxStringBytes
    }

    /// What the write-ahead log and snapshots accept: lists bounded only by the bytes left, strings of 64 KiB.
    public static let storage = FieldCaps(maxListEntries: .max, maxStringBytes: 65_536)
}

extension ByteReader {
    /// Reads a string capped by `limits`.
    public mutating func readString(_ limits: some FieldLimits) throws -> String {
        try readString(limit: limits.maxStringBytes)
    }

    /// Reads a list count, capped by the limits and by the bytes left (each entry takes at least `minBytes`).
    public mutating func readListCount(_ what: String, limits: some FieldLimits, minBytes: Int = 1) throws -> Int {
        let count = try readCount("\(what) count", limit: limits.maxListEntries)
        guard count <= remaining / max(minBytes, 1) else {
            throw CodecError(
                .malformedPayload, "\(what) count \(count) is larger than the \(remaining) bytes left can hold")
        }
        return count
    }
}
