import HealthCodec

/// The byte layout of a log segment (Protocol/STORAGE.md): a 16-byte header, then records of
/// `length u32 | crc u32 | kind u8 | sequence u64 | payload`, all little-endian, the CRC-32 covering kind,
/// sequence and payload. Pure functions, thread-safe.
public enum LogFraming {
    /// First 8 bytes of every segment.
    public static let magic: [UInt8] = Array("HKWAL001".utf8)
    /// Segment header: magic, then the first sequence number the segment may hold (u64).
    public static let headerSize = 16
    /// Record header: length, CRC, kind, sequence.
    public static let recordHeaderSize = 17
    /// Largest payload a record may declare; a larger length is damage, never an allocation.
    public static let maxPayloadBytes = 256 << 20

    /// The segment header for a segment starting at `firstSequence`.
    public static func segmentHeader(firstSequence: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: headerSize)
        w.write(bytes: magic)
        w.writeLE(firstSequence)
        return w.bytes
    }

    /// One framed record.
    public static func record(kind: UInt8, sequence: UInt64, payload: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: recordHeaderSize + payload.count)
        w.writeLE(UInt32(payload.count))
        w.writeLE(UInt32(0))
        w.write(kind)
        w.writeLE(sequence)
        w.write(bytes: payload)
        var bytes = w.bytes
        let crc = bytes.withUnsafeBytes { raw in Zlib.crc32(UnsafeRawBufferPointer(rebasing: raw[8...])) }
        withUnsafeBytes(of: crc.littleEndian) { for i in 0..<4 { bytes[4 + i] = $0[i] } }
        return bytes
    }

    /// A record found in a segment.
    public struct Record: Hashable, Sendable {
        public var kind: UInt8
        public var sequence: UInt64
        public var payload: [UInt8]
        /// Byte offset of the record in its segment.
        public var offset: Int
    }

    /// Why a scan stopped before the end of the bytes.
    public enum Damage: Hashable, Sendable {
        /// The last record is incomplete or fails its checksum and nothing follows it: a write cut short by a
        /// crash. `offset` is where it starts.
        case tornTail(offset: Int)
        /// A record fails its checksum or framing with more bytes after it, or the segment header is bad.
        case corrupt(offset: Int, reason: String)

        /// Where the damage starts; everything before it is intact.
        public var offset: Int {
            switch self {
            case .tornTail(let offset), .corrupt(let offset, _): offset
            }
        }
    }

    /// Everything a scan of one segment found.
    public struct Scan: Sendable {
        /// The header's first sequence number (0 when the header is damaged).
        public var firstSequence: UInt64
        /// Intact records in order.
        public var records: [Record]
        /// Damage found, `nil` when the segment ends cleanly after its last record.
        public var damage: Damage?
    }

    /// Reads every intact record of a segment. Never traps and never allocates more than the bytes given.
    public static func scan(_ bytes: [UInt8]) -> Scan {
        guard bytes.count >= headerSize else {
            return Scan(firstSequence: 0, records: [], damage: .tornTail(offset: 0))
        }
        guard Array(bytes[0..<8]) == magic else {
            return Scan(firstSequence: 0, records: [], damage: .corrupt(offset: 0, reason: "bad segment magic"))
        }
        let firstSequence = load(UInt64.self, bytes, 8)
        var records: [Record] = []
        var offset = headerSize
        var expected = firstSequence
        while offset < bytes.count {
            let left = bytes.count - offset
            if left < recordHeaderSize {
                return Scan(firstSequence: firstSequence, records: records, damage: .tornTail(offset: offset))
            }
            let length = Int(load(UInt32.self, bytes, offset))
            let end = offset + recordHeaderSize + length
            if length > maxPayloadBytes || end > bytes.count {
                // Reaching past the end of the file is a write cut short; an absurd length is damage unless
                // only zeros follow (a file extended but never written).
                if length > maxPayloadBytes {
                    return Scan(
                        firstSequence: firstSequence, records: records,
                        damage: tail(bytes, offset, "record length \(length) is too large"))
                }
                return Scan(firstSequence: firstSequence, records: records, damage: .tornTail(offset: offset))
            }
            let stored = load(UInt32.self, bytes, offset + 4)
            let actual = bytes.withUnsafeBytes { raw in
                Zlib.crc32(UnsafeRawBufferPointer(rebasing: raw[(offset + 8)..<end]))
            }
            if stored != actual {
                return Scan(
                    firstSequence: firstSequence, records: records,
                    damage: end == bytes.count || isZero(bytes, from: end)
                        ? .tornTail(offset: offset) : .corrupt(offset: offset, reason: "checksum mismatch"))
            }
            let sequence = load(UInt64.self, bytes, offset + 9)
            guard sequence == expected else {
                return Scan(
                    firstSequence: firstSequence, records: records,
                    damage: .corrupt(offset: offset, reason: "sequence \(sequence) where \(expected) was expected"))
            }
            records.append(
                Record(
                    kind: bytes[offset + 8], sequence: sequence,
                    payload: Array(bytes[(offset + recordHeaderSize)..<end]), offset: offset))
            expected += 1
            offset = end
        }
        return Scan(firstSequence: firstSequence, records: records, damage: nil)
    }

    /// Torn when only zero bytes follow `offset` (a file extended but never written), corrupt otherwise.
    static func tail(_ bytes: [UInt8], _ offset: Int, _ reason: String) -> Damage {
        isZero(bytes, from: offset) ? .tornTail(offset: offset) : .corrupt(offset: offset, reason: reason)
    }

    static func isZero(_ bytes: [UInt8], from offset: Int) -> Bool {
        bytes[offset...].allSatisfy { $0 == 0 }
    }

    static func load<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], _ offset: Int) -> T {
        T(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) })
    }
}
