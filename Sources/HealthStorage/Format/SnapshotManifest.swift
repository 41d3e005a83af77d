import HealthCodec

/// The list of snapshot files that together make one snapshot generation (Protocol/STORAGE.md): written last,
/// atomically, so a generation counts only once every file it names is durable. Pure, thread-safe.
public struct SnapshotManifest: Hashable, Sendable {
    /// First 8 bytes of the manifest file.
    public static let magic: [UInt8] = Array("HKMANI01".utf8)

    /// One quantity type's snapshot.
    public struct Entry: Hashable, Sendable {
        /// The type's identifier.
        public var type: String
        /// The snapshot file name in the snapshot directory; empty when the shard held nothing.
        public var file: String
        /// The log sequence the shard's snapshot is complete up to: replay skips its records up to here.
        public var sequence: UInt64
        /// The file's size and CRC-32, checked before it is decoded.
        public var size: UInt64
        public var crc: UInt32

        /// An entry from its parts.
        public init(type: String, file: String, sequence: UInt64, size: UInt64, crc: UInt32) {
            self.type = type
            self.file = file
            self.sequence = sequence
            self.size = size
            self.crc = crc
        }
    }

    /// Increases by one with every snapshot.
    public var generation: UInt64
    /// One entry per quantity type.
    public var entries: [Entry]

    /// A manifest from its parts.
    public init(generation: UInt64, entries: [Entry]) {
        self.generation = generation
        self.entries = entries
    }

    /// The manifest's bytes, CRC-32 last.
    public func encode() -> [UInt8] {
        var w = ByteWriter()
        w.write(bytes: SnapshotManifest.magic)
        w.writeLE(generation)
        w.writeVarint(UInt64(entries.count))
        for entry in entries {
            w.writeString(entry.type)
            w.writeString(entry.file)
            w.writeLE(entry.sequence)
            w.writeLE(entry.size)
            w.writeLE(entry.crc)
        }
        var bytes = w.bytes
        withUnsafeBytes(of: Zlib.crc32(bytes).littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Decodes a manifest; throws ``CodecError`` naming the offset of the problem.
    public static func decode(_ bytes: [UInt8]) throws -> SnapshotManifest {
        guard bytes.count >= magic.count + 12, Array(bytes[0..<magic.count]) == magic else {
            throw CodecError(.malformedPayload, "bad manifest magic at offset 0")
        }
        let body = bytes.count - 4
        var trailer = ByteReader(bytes, offset: body)
        guard
            try trailer.readLE(UInt32.self)
                == bytes.withUnsafeBytes({ Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[..<body])) })
        else { throw CodecError(.malformedPayload, "manifest checksum mismatch (stored at offset \(body))") }
        var r = ByteReader(bytes, offset: magic.count, endIndex: body)
        let generation = try r.readLE(UInt64.self)
        let count = try r.readCount("entry count", limit: r.remaining / 22)
        var entries: [Entry] = []
        for _ in 0..<count {
            entries.append(
                Entry(
                    type: try r.readString(limit: 256), file: try r.readString(limit: 1024),
                    sequence: try r.readLE(UInt64.self),
                    size: try r.readLE(UInt64.self), crc: try r.readLE(UInt32.self)))
        }
        try r.expectEnd("the manifest")
        if let beyond = entries.first(where: { $0.sequence > LogFraming.maxSequence }) {
            throw CodecError(
                .malformedPayload, "manifest entry \(beyond.type) names sequence \(beyond.sequence), beyond any log")
        }
        return SnapshotManifest(generation: generation, entries: entries)
    }
}
