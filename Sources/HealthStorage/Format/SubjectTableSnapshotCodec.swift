import HealthCodec
import HealthEngine
import HealthModel

/// The byte layout of a profile table's snapshot file (Protocol/STORAGE.md, "Characteristics and activity
/// summary snapshots"): magic, the log sequence it is complete up to, per subject (in order) its entries (in key
/// order), and a CRC-32 of everything before it. Pure, thread-safe.
public struct SubjectTableSnapshotCodec<Key: Hashable & Comparable & Sendable, Value: Hashable & Sendable>: Sendable {
    /// First 8 bytes of the file.
    public let magic: [UInt8]
    /// What the entries are, for messages (`characteristic`).
    public let what: String
    /// Fewest bytes an entry takes (caps counts before allocating).
    let minEntryBytes: Int
    let writeEntry: @Sendable (inout ByteWriter, Key, Value) -> Void
    let readEntry: @Sendable (inout ByteReader) throws -> (Key, Value)

    /// The file's bytes for `image`, complete up to log record `sequence`.
    public func encode(_ image: SubjectTable<Key, Value>.Image, sequence: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: 64 + image.values.reduce(0) { $0 + $1.count } * 64)
        w.write(bytes: magic)
        w.writeLE(sequence)
        w.writeVarint(UInt64(image.count))
        for subject in image.keys.sorted() {
            let entries = image[subject]!
            w.writeString(subject)
            w.writeVarint(UInt64(entries.count))
            for key in entries.keys.sorted() { writeEntry(&w, key, entries[key]!) }
        }
        return SnapshotTrailer.sealed(w.bytes)
    }

    /// Decodes a file; throws ``CodecError`` naming the offset of the problem (bad magic or checksum, counts past
    /// the bytes left, an entry that does not decode, a subject or key twice, bytes left over).
    public func decode(_ bytes: [UInt8]) throws -> (image: SubjectTable<Key, Value>.Image, sequence: UInt64) {
        var r = try SnapshotTrailer.opened(bytes, magic: magic, what: "\(what) snapshot")
        let sequence = try r.readLE(UInt64.self)
        let subjectCount = try r.readListCount("subject", limits: FieldCaps.storage, minBytes: 2)
        var image: SubjectTable<Key, Value>.Image = [:]
        for _ in 0..<subjectCount {
            let at = r.offset
            let subject = try r.readString(limit: SampleRules.maxSubjectLength)
            let count = try r.readListCount(what, limits: FieldCaps.storage, minBytes: minEntryBytes)
            var entries: [Key: Value] = [:]
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let entryAt = r.offset
                let (key, value) = try readEntry(&r)
                guard entries.updateValue(value, forKey: key) == nil else {
                    throw CodecError(.malformedPayload, "\(what) of \(subject) given twice at offset \(entryAt)")
                }
            }
            guard !entries.isEmpty, image.updateValue(entries, forKey: subject) == nil else {
                throw CodecError(.malformedPayload, "subject \(subject) empty or twice at offset \(at)")
            }
        }
        try r.expectEnd("the \(what) snapshot")
        return (image, sequence)
    }
}

extension SubjectTableSnapshotCodec where Key == CharacteristicKey, Value == String {
    /// `characteristics-<generation>.snap`: entries `string key, string value` (short form).
    public static let characteristics = SubjectTableSnapshotCodec(
        magic: Array("HKCHR001".utf8), what: "characteristic", minEntryBytes: 2,
        writeEntry: { w, key, value in w.writeCharacteristics([CharacteristicEntry(key: key.rawValue, value: value)]) },
        readEntry: { r in
            let at = r.offset
            let entries = try r.readCharacteristics()
            guard entries.count == 1, let key = CharacteristicKey(rawValue: entries[0].key),
                let value = try? Characteristics.normalized(key, entries[0].value), value == entries[0].value
            else { throw CodecError(.malformedPayload, "invalid characteristic at offset \(at)") }
            return (key, value)
        })
}

extension SubjectTableSnapshotCodec where Key == Int, Value == ActivitySummary {
    /// `activitySummary-<generation>.snap`: entries as PROTOCOL.md's ActivitySummary, by day.
    public static let activitySummaries = SubjectTableSnapshotCodec(
        magic: Array("HKACT001".utf8), what: "activity summary", minEntryBytes: 3,
        writeEntry: { w, _, summary in w.writeActivitySummary(summary) },
        readEntry: { r in
            let at = r.offset
            let summary = try r.readActivitySummary()
            do {
                try summary.validate()
            } catch {
                throw CodecError(.malformedPayload, "invalid activity summary at offset \(at)")
            }
            return (summary.day, summary)
        })
}

/// The magic-and-CRC frame every snapshot file of a table kept apart from the quantity shards shares.
enum SnapshotTrailer {
    /// `body` with its CRC-32 appended, little-endian.
    static func sealed(_ body: [UInt8]) -> [UInt8] {
        var bytes = body
        withUnsafeBytes(of: Zlib.crc32(bytes).littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// A reader of `bytes` after the magic and before the CRC, once both are checked.
    static func opened(_ bytes: [UInt8], magic: [UInt8], what: String) throws -> ByteReader {
        guard bytes.count >= magic.count + 12, Array(bytes[0..<magic.count]) == magic else {
            throw CodecError(.malformedPayload, "bad \(what) magic at offset 0")
        }
        let body = bytes.count - 4
        var trailer = ByteReader(bytes, offset: body)
        guard
            try trailer.readLE(UInt32.self)
                == bytes.withUnsafeBytes({ Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[..<body])) })
        else { throw CodecError(.malformedPayload, "\(what) checksum mismatch (stored at offset \(body))") }
        return ByteReader(bytes, offset: magic.count, endIndex: body)
    }
}
