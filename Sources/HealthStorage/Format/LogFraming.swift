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
    /// The highest sequence number a log can reach (2⁶²: a log would need 4.6 × 10¹⁸ records to get there). A
    /// segment or manifest naming a higher one is damage, so that sequence arithmetic never overflows.
    public static let maxSequence: UInt64 = 1 << 62

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

    /// A record as a scan found it. Its payload is not copied out of the segment: the record keeps the
    /// segment's bytes and where the payload lies in them (a replay reads every payload once, in place).
    public struct Record: Hashable, Sendable {
        public var kind: UInt8
        public var sequence: UInt64
        /// The bytes of the segment the record lies in (shared with the scan's other records).
        public let segment: [UInt8]
        /// Where the payload lies in ``segment``.
        public let payloadRange: Range<Int>
        /// Byte offset of the record in its segment.
        public var offset: Int

        /// A copy of the payload.
        public var payload: [UInt8] { Array(segment[payloadRange]) }

        /// A reader of the payload, in place.
        public var payloadReader: ByteReader {
            ByteReader(segment, offset: payloadRange.lowerBound, endIndex: payloadRange.upperBound)
        }

        /// Records are equal when their kind, sequence, offset and payload bytes are.
        public static func == (a: Record, b: Record) -> Bool {
            a.kind == b.kind && a.sequence == b.sequence && a.offset == b.offset
                && a.segment[a.payloadRange].elementsEqual(b.segment[b.payloadRange])
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(kind)
            hasher.combine(sequence)
            hasher.combine(offset)
            hasher.combine(payloadRange.count)
        }
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
    ///
    /// A bad record (incomplete, an impossible length or a checksum failure) is a torn tail only when no valid
    /// record follows it (see ``nextValidRecord(in:after:expected:)``); otherwise the damage is in the middle.
    /// A header that is incomplete or all zeros is torn; any other bad header is corrupt.
    public static func scan(_ bytes: [UInt8]) -> Scan {
        guard bytes.count >= headerSize else {
            return Scan(firstSequence: 0, records: [], damage: .tornTail(offset: 0))
        }
        guard Array(bytes[0..<8]) == magic else {
            return Scan(
                firstSequence: 0, records: [], damage: tail(bytes, 0, after: 0, expected: 0, "bad segment magic"))
        }
        let firstSequence = load(UInt64.self, bytes, 8)
        guard firstSequence <= maxSequence else {
            return Scan(
                firstSequence: 0, records: [],
                damage: .corrupt(offset: 0, reason: "segment header names sequence \(firstSequence), beyond any log"))
        }
        var records: [Record] = []
        var offset = headerSize
        var expected = firstSequence
        while offset < bytes.count {
            guard let (record, end) = record(in: bytes, at: offset) else {
                return Scan(
                    firstSequence: firstSequence, records: records,
                    damage: tail(bytes, offset, after: offset, expected: expected, badRecordReason(bytes, offset)))
            }
            guard record.sequence == expected else {
                return Scan(
                    firstSequence: firstSequence, records: records,
                    damage: .corrupt(
                        offset: offset, reason: "sequence \(record.sequence) where \(expected) was expected"))
            }
            records.append(record)
            expected += 1
            offset = end
        }
        return Scan(firstSequence: firstSequence, records: records, damage: nil)
    }

    /// The record at `offset` and the offset after it, when it is complete, its length possible and its
    /// checksum right; `nil` otherwise.
    static func record(in bytes: [UInt8], at offset: Int) -> (Record, end: Int)? {
        guard offset >= 0, bytes.count - offset >= recordHeaderSize else { return nil }
        let length = Int(load(UInt32.self, bytes, offset))
        guard length <= maxPayloadBytes, length <= bytes.count - offset - recordHeaderSize else { return nil }
        let end = offset + recordHeaderSize + length
        let stored = load(UInt32.self, bytes, offset + 4)
        let actual = bytes.withUnsafeBytes { raw in
            Zlib.crc32(UnsafeRawBufferPointer(rebasing: raw[(offset + 8)..<end]))
        }
        guard stored == actual else { return nil }
        let record = Record(
            kind: bytes[offset + 8], sequence: load(UInt64.self, bytes, offset + 9), segment: bytes,
            payloadRange: (offset + recordHeaderSize)..<end, offset: offset)
        return (record, end)
    }

    /// The offset of the first valid record after `offset` whose sequence is at least `expected` (and no more
    /// than the records the rest of the bytes could hold): proof that damage at `offset` is not a torn tail.
    /// Cheap checks on the sequence come before the checksum, so a scan costs about one pass over the bytes.
    public static func nextValidRecord(in bytes: [UInt8], after offset: Int, expected: UInt64) -> Int? {
        var candidate = offset + 1
        while candidate + recordHeaderSize <= bytes.count {
            defer { candidate += 1 }
            // Each record between the damage and the candidate takes at least a record header.
            let sequence = load(UInt64.self, bytes, candidate + 9)
            let between = UInt64((candidate - offset) / recordHeaderSize)
            guard sequence >= expected, sequence - expected <= between else { continue }
            if record(in: bytes, at: candidate) != nil { return candidate }
        }
        return nil
    }

    /// Every valid record found at or after `offset`, resynchronising past damage (what `--repair` could not
    /// keep, so that it can say how much that was).
    public static func salvage(_ bytes: [UInt8], from offset: Int, expected: UInt64) -> [Record] {
        var found: [Record] = []
        var position = offset
        var expected = expected
        while true {
            var next = record(in: bytes, at: position)
            if next == nil, let resumed = nextValidRecord(in: bytes, after: position, expected: expected) {
                next = record(in: bytes, at: resumed)
            }
            guard let (record, end) = next else { return found }
            found.append(record)
            position = end
            expected = min(record.sequence, maxSequence) + 1
        }
    }

    private static func badRecordReason(_ bytes: [UInt8], _ offset: Int) -> String {
        guard bytes.count - offset >= recordHeaderSize else { return "incomplete record header" }
        let length = Int(load(UInt32.self, bytes, offset))
        if length > maxPayloadBytes { return "record length \(length) is too large" }
        if length > bytes.count - offset - recordHeaderSize { return "record length \(length) reaches past the end" }
        return "checksum mismatch"
    }

    /// Torn when nothing valid follows `offset` (a write cut short, or a file extended but never written),
    /// corrupt otherwise.
    static func tail(_ bytes: [UInt8], _ offset: Int, after: Int, expected: UInt64, _ reason: String) -> Damage {
        if offset == 0 {
            return isZero(bytes, from: 0) ? .tornTail(offset: 0) : .corrupt(offset: 0, reason: reason)
        }
        guard let next = nextValidRecord(in: bytes, after: after, expected: expected) else {
            return .tornTail(offset: offset)
        }
        return .corrupt(offset: offset, reason: "\(reason), with a valid record after it at offset \(next)")
    }

    static func isZero(_ bytes: [UInt8], from offset: Int) -> Bool {
        bytes[offset...].allSatisfy { $0 == 0 }
    }

    static func load<T: FixedWidthInteger>(_: T.Type, _ bytes: [UInt8], _ offset: Int) -> T {
        T(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) })
    }
}
