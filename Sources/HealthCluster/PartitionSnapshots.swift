import HealthCodec
import HealthEngine
import HealthModel
import HealthStorage

/// The head of a partition snapshot (Protocol/STORAGE.md, "Partition snapshots"): which data messages of
/// `HK_SNAPSHOTS` hold it and, for each store, the stream sequence of the partition its image is complete up to.
/// Pure, thread-safe.
public struct PartitionSnapshotHead: Hashable, Sendable {
    /// First 8 bytes of the head message.
    public static let magic: [UInt8] = Array("HKPSNAP1".utf8)

    /// One store's image: where it lies in the data, and the partition stream sequence it covers.
    public struct Part: Hashable, Sendable {
        public var type: String
        /// The partition stream sequence the image is complete up to.
        public var sequence: UInt64
        /// Its bytes in the data (the parts lie back to back in head order); 0: the store held nothing.
        public var size: UInt64

        /// A part from its parts.
        public init(type: String, sequence: UInt64, size: UInt64) {
            self.type = type
            self.sequence = sequence
            self.size = size
        }
    }

    /// The partition.
    public var partition: Int
    /// The stream sequences of the first and last data messages in `HK_SNAPSHOTS`, and how many there are.
    public var firstData: UInt64
    public var lastData: UInt64
    public var dataMessages: Int
    /// CRC-32 of the data (every data message's bytes in order).
    public var dataCRC: UInt32
    /// One per store, in the order their bytes lie in the data.
    public var parts: [Part]

    /// A head from its parts.
    public init(
        partition: Int, firstData: UInt64, lastData: UInt64, dataMessages: Int, dataCRC: UInt32, parts: [Part]
    ) {
        self.partition = partition
        self.firstData = firstData
        self.lastData = lastData
        self.dataMessages = dataMessages
        self.dataCRC = dataCRC
        self.parts = parts
    }

    /// The stream sequence every part covers: the records after it are replayed (those of a store up to its
    /// own part's sequence skipped).
    public var sequence: UInt64 { parts.map(\.sequence).min() ?? 0 }

    /// Bytes of data.
    public var dataBytes: UInt64 { parts.reduce(0) { $0 + $1.size } }

    /// The head's bytes, CRC-32 last.
    public func encode() -> [UInt8] {
        var w = ByteWriter()
        w.write(bytes: Self.magic)
        w.writeLE(UInt32(partition))
        w.writeLE(firstData)
        w.writeLE(lastData)
        w.writeLE(UInt32(dataMessages))
        w.writeLE(dataCRC)
        w.writeVarint(UInt64(parts.count))
        for part in parts {
            w.writeString(part.type)
            w.writeLE(part.sequence)
            w.writeLE(part.size)
        }
        return SnapshotTrailer.sealed(w.bytes)
    }

    /// Decodes a head; throws ``CodecError`` naming the offset of the problem.
    public static func decode(_ bytes: [UInt8]) throws -> PartitionSnapshotHead {
        var r = try SnapshotTrailer.opened(bytes, magic: magic, what: "partition snapshot head")
        let partition = Int(try r.readLE(UInt32.self))
        let firstData = try r.readLE(UInt64.self)
        let lastData = try r.readLE(UInt64.self)
        let dataMessages = Int(try r.readLE(UInt32.self))
        let dataCRC = try r.readLE(UInt32.self)
        let count = try r.readCount("part count", limit: r.remaining / 17)
        var parts: [Part] = []
        for _ in 0..<count {
            parts.append(
                Part(
                    type: try r.readString(limit: 256), sequence: try r.readLE(UInt64.self),
                    size: try r.readLE(UInt64.self)))
        }
        try r.expectEnd("the partition snapshot head")
        guard dataMessages > 0 ? firstData > 0 && firstData <= lastData : firstData == 0 && lastData == 0 else {
            throw CodecError(
                .malformedPayload,
                "partition snapshot head: \(dataMessages) data messages from \(firstData) through \(lastData)")
        }
        return PartitionSnapshotHead(
            partition: partition, firstData: firstData, lastData: lastData, dataMessages: dataMessages,
            dataCRC: dataCRC, parts: parts)
    }
}

/// Partition snapshots in JetStream (Protocol/STORAGE.md, "Partition snapshots"): a partition's owner writes the
/// images of its stores, restricted to the partition's subjects, to the stream `HK_SNAPSHOTS` as data messages
/// of at most ``chunkBytes`` on `hk.snap.<i>.data`, then a head naming them on `hk.snap.<i>.head`, published only
/// if the partition's last head is still the one the owner read (so heads only move forward, even with a former
/// owner that has not noticed it lost the lease). It then drops the older snapshot's messages and the partition
/// stream's records the new one covers. A node taking the partition over loads the newest snapshot and replays
/// only the stream after it.
public struct PartitionSnapshots: Sendable {
    public let jetStream: JetStream
    public let layout: PartitionLayout

    /// The stream holding every partition's snapshots.
    public static let streamName = "HK_SNAPSHOTS"
    /// Its subjects: `hk.snap.<i>.data` and `hk.snap.<i>.head`.
    public static let streamSubjects = "hk.snap.>"
    /// The most bytes one data message carries (NATS refuses messages above its `max_payload`, 1 MiB by default).
    public static let chunkBytes = 256 << 10

    /// Snapshots of `layout`'s partitions through `jetStream`.
    public init(jetStream: JetStream, layout: PartitionLayout) {
        self.jetStream = jetStream
        self.layout = layout
    }

    static func dataSubject(_ index: Int) -> String { "hk.snap.\(index).data" }
    static func headSubject(_ index: Int) -> String { "hk.snap.\(index).head" }

    /// Partition `index`'s newest snapshot head and its stream sequence in `HK_SNAPSHOTS`; `nil` when it has
    /// none. Throws ``ErrorCode/storageUnavailable`` when NATS does not answer or the head is damaged.
    public func latest(_ index: Int) throws -> (sequence: UInt64, head: PartitionSnapshotHead)? {
        do {
            guard let (sequence, bytes) = try jetStream.lastMessage(Self.streamName, subject: Self.headSubject(index))
            else { return nil }
            let head = try PartitionSnapshotHead.decode(bytes)
            guard head.partition == index else {
                throw CodecError(.malformedPayload, "it names partition \(head.partition)")
            }
            return (sequence, head)
        } catch let failure as NATSFailure {
            throw failure.healthError
        } catch let error as CodecError {
            throw HealthError(
                .storageUnavailable, "the snapshot head of partition \(index) in \(Self.streamName): \(error.message)")
        }
    }

    /// Writes a snapshot of partition `index` from `store`, each store's image marked with the last stream
    /// sequence `log` applied, unless the partition's newest snapshot already covers as much (`nil` then); then
    /// drops the older snapshot and the partition stream's records up to the new one's sequence. Throws
    /// ``ErrorCode/storageUnavailable`` when NATS does not answer, or when another node wrote a head meanwhile.
    /// Returns the head written.
    public func write(_ index: Int, store: HealthStore, log: JetStreamChangeLog) throws -> PartitionSnapshotHead? {
        do {
            let previous = try latest(index)
            let layout = self.layout
            let parts = SnapshotPart.capture(
                store, subjects: { layout.partition(of: $0) == index }, mark: { log.lastApplied(index) })
            let covered = parts.map(\.sequence).min() ?? 0
            guard covered > previous?.head.sequence ?? 0 else { return nil }
            var data = [UInt8]()
            data.reserveCapacity(parts.reduce(0) { $0 + $1.bytes.count })
            for part in parts { data += part.bytes }
            var sequences: [UInt64] = []
            var offset = 0
            while offset < data.count {
                let end = min(offset + Self.chunkBytes, data.count)
                sequences.append(try jetStream.publish(Array(data[offset..<end]), to: Self.dataSubject(index)))
                offset = end
            }
            let head = PartitionSnapshotHead(
                partition: index, firstData: sequences.first ?? 0, lastData: sequences.last ?? 0,
                dataMessages: sequences.count, dataCRC: Zlib.crc32(data),
                parts: parts.map { .init(type: $0.type, sequence: $0.sequence, size: UInt64($0.bytes.count)) })
            let headSequence = try jetStream.publish(
                head.encode(), to: Self.headSubject(index), expectedLastOnSubject: previous?.sequence ?? 0)
            let firstKept = sequences.first ?? headSequence
            try jetStream.purge(Self.streamName, subject: Self.dataSubject(index), below: firstKept)
            try jetStream.purge(Self.streamName, subject: Self.headSubject(index), below: headSequence)
            try jetStream.purge(layout.streamName(index), subject: layout.streamSubject(index), below: covered + 1)
            return head
        } catch let failure as NATSFailure {
            if failure.isWrongLastSequence {
                throw HealthError(
                    .storageUnavailable, "partition \(index): another node wrote a snapshot meanwhile; not written")
            }
            throw failure.healthError
        }
    }

    /// Loads `head`, partition `index`'s snapshot, into `store`: reads and checks every part first, then
    /// replaces the partition's subjects in every store with the snapshot's. Returns each store's sequence (its
    /// records up to there are in the snapshot) and the samples loaded. Throws ``ErrorCode/storageUnavailable``
    /// when the data cannot be read whole (a newer snapshot replaced it meanwhile: take the newest again), does
    /// not match the head, or does not decode.
    public func load(_ head: PartitionSnapshotHead, into store: HealthStore) throws -> (
        applied: [String: UInt64], samples: Int
    ) {
        let index = head.partition
        var data = [UInt8]()
        var messages = 0
        do {
            // A snapshot of nothing (firstData 0) has no data messages to read.
            try jetStream.read(
                Self.streamName, subject: Self.dataSubject(index), after: max(head.firstData, 1) - 1,
                through: head.lastData
            ) { sequence, bytes in
                guard messages > 0 || sequence == head.firstData, sequence <= head.lastData,
                    data.count + bytes.count <= head.dataBytes
                else {
                    throw HealthError(
                        .storageUnavailable,
                        "the snapshot of partition \(index) is no longer whole in \(Self.streamName); retry")
                }
                data += bytes
                messages += 1
            }
        } catch let failure as NATSFailure {
            throw failure.healthError
        }
        guard messages == head.dataMessages, data.count == head.dataBytes, Zlib.crc32(data) == head.dataCRC else {
            throw HealthError(
                .storageUnavailable,
                "the snapshot of partition \(index): \(messages) data messages and \(data.count) bytes (CRC-32 "
                    + "\(Zlib.crc32(data))) where its head names \(head.dataMessages), \(head.dataBytes) and "
                    + "\(head.dataCRC); retry")
        }
        var parts: [SnapshotPart] = []
        var offset = 0
        for part in head.parts {
            parts.append(
                SnapshotPart(
                    type: part.type, sequence: part.sequence, bytes: Array(data[offset..<offset + Int(part.size)])))
            offset += Int(part.size)
        }
        let layout = self.layout
        var samples = 0
        var applied: [String: UInt64] = [:]
        for part in parts {
            do {
                samples += try part.restore(into: store, replacing: { layout.partition(of: $0) == index })
            } catch let error as CodecError {
                throw HealthError(
                    .storageUnavailable, "the snapshot of partition \(index): the \(part.type) part: \(error.message)")
            }
            applied[part.type] = part.sequence
        }
        return (applied, samples)
    }
}
