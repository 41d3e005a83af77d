import Foundation
import HealthCodec
import HealthEngine
import HealthModel

/// The byte layout of one shard snapshot file (Protocol/STORAGE.md): magic, type, the log sequence the image
/// is complete up to, the type's newest change anchor, the series (tables, deletion records, the batch table,
/// then the rows as sealed blocks, each with its own CRC-32, then the metadata table), and a CRC-32 of everything
/// before it. Writes version 10; versions 1–9 are still read (1–9: a batch entry's UUIDs kept or derived from its
/// batch id, never recomputed from the rows' content; 1–8: a metadata row per row instead of each distinct row once; 1–7: sources' user-entered flags decided without the
/// key `HKWasUserEntered`, completed from the metadata table when restored; 1–6: raw little-endian columns instead
/// of sealed blocks; 1–5: no metadata table; 1–3: per-row UUID and writer columns instead of the batch table; 1–4:
/// recent batches without their writer).
/// Pure functions, thread-safe.
public enum SnapshotCodec {
    /// First 8 bytes of every snapshot file this version writes (version 10: rows in sealed blocks, sources'
    /// user-entered flags by the rule of HEALTHKIT.md §8, the metadata table dictionary-encoded, batch entries
    /// naming their rows by content).
    public static let magic: [UInt8] = Array("HKSNAP10".utf8)
    /// First 8 bytes of version 9 files (as version 10, but a batch entry's naming is 0 or 1 only).
    public static let magicWithoutContentNaming: [UInt8] = Array("HKSNAP09".utf8)
    /// First 8 bytes of version 8 files (as version 9, but the metadata table holds a metadata row per row).
    public static let magicWithMetadataPerRow: [UInt8] = Array("HKSNAP08".utf8)
    /// First 8 bytes of version 7 files (as version 8, but their user-entered flags read only the key
    /// `HKMetadataKeyWasUserEntered`: restoring completes them from the metadata table).
    public static let magicWithEarlierManualFlags: [UInt8] = Array("HKSNAP07".utf8)
    /// First 8 bytes of version 6 files (raw columns, then each series' metadata table).
    public static let magicWithRawColumns: [UInt8] = Array("HKSNAP06".utf8)
    /// First 8 bytes of version 5 files (as version 6 without the metadata tables).
    public static let magicWithoutMetadata: [UInt8] = Array("HKSNAP05".utf8)
    /// Rows per sealed block of an image made from columns (a series' own blocks are written as they are).
    static let blockRows = SeriesImage.blockRows
    /// Fewer bytes than the smallest block takes with its length and CRC: caps a series' block count.
    static let minimumBlockBytes = 64
    /// First 8 bytes of version 4 files (batch table, no UUID column, recent batches without writers).
    public static let magicWithoutBatchWriters: [UInt8] = Array("HKSNAP04".utf8)
    /// First 8 bytes of version 3 files (UUID, writer and anchor columns, change log).
    public static let magicWithUUIDColumn: [UInt8] = Array("HKSNAP03".utf8)
    /// First 8 bytes of version 2 files (writer column, no change log); rows get anchors in load order.
    public static let magicWithoutChangeLog: [UInt8] = Array("HKSNAP02".utf8)
    /// First 8 bytes of version 1 files (neither); read with writer 0 everywhere and anchors in load order.
    public static let magicWithoutWriters: [UInt8] = Array("HKSNAP01".utf8)
    /// How a file lays out the rows of each series: sealed blocks (version 10, what hkd writes) or raw columns
    /// (version 6; tests build older files from it).
    enum RowLayout {
        /// Sealed blocks and the dictionary-encoded metadata table (version 10).
        case sealedBlocks
        /// Sealed blocks and a metadata row per row (version 8).
        case sealedBlocksWithMetadataPerRow
        /// Raw columns and a metadata row per row (version 6).
        case rawColumns
    }

    /// Column bytes per sample in versions 4 and 5: start, end, value, source id, arrival anchor.
    static let columnBytes = 8 + 8 + 8 + 2 + 8

    /// The encoded file for `image`, complete up to log sequence `sequence`, in one array (tests, small images;
    /// hkd writes snapshots with ``encode(_:sequence:to:)``).
    public static func encode(_ image: ShardImage, sequence: UInt64) -> [UInt8] {
        encode(image, sequence: sequence, layout: .sealedBlocks)
    }

    /// ``encode(_:sequence:)`` with the rows laid out as `layout` says.
    static func encode(_ image: ShardImage, sequence: UInt64, layout: RowLayout) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(
            64 + image.sampleCount * (layout == .rawColumns ? columnBytes : 1) + image.series.count * 256)
        encode(image, sequence: sequence, layout: layout) { (piece: UnsafeRawBufferPointer) throws(Never) in
            bytes.append(contentsOf: piece)
        }
        return bytes
    }

    /// Encodes `image` piece by piece: `sink` receives the file's bytes in order, the tables gathered into
    /// pieces of about 64 KiB and every column straight from the image's memory, so a snapshot never needs a
    /// second copy of the data. Returns the file's CRC-32 (its last four bytes) and its size.
    /// `placing` learns where each batch entry's listed names (kept UUIDs, element extras) lie in the file
    /// (``NamePlacement``).
    @discardableResult
    public static func encode<Failure: Error>(
        _ image: ShardImage, sequence: UInt64, to sink: (UnsafeRawBufferPointer) throws(Failure) -> Void,
        placing: (NamePlacement) -> Void = { _ in }
    ) throws(Failure) -> (crc: UInt32, size: Int) {
        try encode(image, sequence: sequence, layout: .sealedBlocks, to: sink, placing: placing)
    }

    /// ``encode(_:sequence:to:)`` with the rows laid out as `layout` says.
    @discardableResult
    static func encode<Failure: Error>(
        _ image: ShardImage, sequence: UInt64, layout: RowLayout,
        to sink: (UnsafeRawBufferPointer) throws(Failure) -> Void, placing: (NamePlacement) -> Void = { _ in }
    ) throws(Failure) -> (crc: UInt32, size: Int) {
        var crc: UInt32 = 0
        var size = 0
        func pass(_ piece: UnsafeRawBufferPointer) throws(Failure) {
            crc = Zlib.crc32(piece, initial: crc)
            size += piece.count
            try sink(piece)
        }
        var w = ByteWriter(capacity: pieceSize)
        func flush() throws(Failure) {
            let bytes = ContiguousArray(w.bytes)
            w = ByteWriter(capacity: pieceSize)
            try withBytes(of: bytes, pass)
        }
        func column<T>(_ values: ContiguousArray<T>) throws(Failure) {
            try flush()
            try withBytes(of: values, pass)
        }
        switch layout {
        case .sealedBlocks: w.write(bytes: magic)
        case .sealedBlocksWithMetadataPerRow: w.write(bytes: magicWithMetadataPerRow)
        case .rawColumns: w.write(bytes: magicWithRawColumns)
        }
        w.writeString(image.type.identifier)
        w.writeLE(sequence)
        w.writeLE(image.lastAnchor)
        w.writeVarint(UInt64(image.series.count))
        for series in image.series {
            writeTables(series, into: &w)
            if w.count >= pieceSize { try flush() }
            for batch in series.batches {
                writeBatchHeader(batch, into: &w)
                /// The entry's names, raw, where `placing` learns they lie.
                func names<Name>(_ list: NameList<Name>) throws(Failure) {
                    try flush()
                    placing(
                        NamePlacement(
                            subject: series.subject, firstAnchor: batch.firstAnchor, count: list.count, offset: size))
                    try list.withBytes(pass)
                }
                switch batch.naming {
                case .kept(let uuids): try names(uuids)
                case .elements(let extras): try names(extras)
                case .batch, .content: break
                }
                if w.count >= pieceSize { try flush() }
            }
            switch layout {
            case .sealedBlocks, .sealedBlocksWithMetadataPerRow:
                // The series' own blocks, as they are: no row is decoded or encoded again.
                w.writeVarint(UInt64(series.blocks.count))
                for block in series.blocks {
                    block.withBytes { bytes in
                        w.writeVarint(UInt64(bytes.count))
                        w.writeLE(Zlib.crc32(bytes))
                        w.write(bytes: bytes)
                    }
                    if w.count >= pieceSize { try flush() }
                }
            case .rawColumns:
                let rows = series.columns
                try column(rows.starts)
                try column(rows.ends)
                try column(rows.values)
                try column(rows.sourceIDs)
                try column(rows.arrivals)
            }
            var table = ByteWriter(capacity: 16)
            if layout == .sealedBlocks {
                let encoded = series.metadata.dictionaryEncoded
                MetadataTable.encode(distinct: encoded.distinct, entries: encoded.entries, into: &table)
            } else {
                MetadataTable.encode(Array(series.metadata.entries), into: &table)
            }
            w.writeBlob(table.bytes)
            if w.count >= pieceSize { try flush() }
        }
        try flush()
        let fileCRC = crc
        try withBytes(of: ContiguousArray([fileCRC.littleEndian]), pass)
        return (fileCRC, size)
    }

    /// Reads the sealed blocks of a series of `count` rows as they are: each block's CRC-32 is checked, then
    /// the block itself (``SealedBlock/init(validating:checkingInvariants:decoded:)``: header, columns, summary
    /// and the rows against the engine's invariants; restoring the image checks the rest: anchors, sources,
    /// order across blocks).
    /// With `memory` (the file's own bytes, mapped), each block is read from there afterwards instead of from a
    /// copy of its own (``SealedBlock/moved(to:at:)``): cold from the start.
    static func readBlocks(
        _ r: inout ByteReader, count: Int, subject: String, blocksIn memory: (any BlockMemory)? = nil
    ) throws -> [SealedBlock] {
        let blockCount = try r.readCount("block count", limit: r.remaining / minimumBlockBytes)
        var blocks: [SealedBlock] = []
        blocks.reserveCapacity(blockCount)
        var rows = 0
        for index in 0..<blockCount {
            let offset = r.offset
            let length = try r.readCount("block length", limit: r.remaining)
            let stored = try r.readLE(UInt32.self)
            let start = r.offset
            let bytes = Array(try r.readBytes(length))
            guard Zlib.crc32(bytes) == stored else {
                throw CodecError(
                    .malformedPayload, "block \(index) of series \"\(subject)\" fails its checksum (offset \(offset))")
            }
            let block: SealedBlock
            do {
                // Blocks read into memory take today's form (laned when they mix sources); cold ones stay as written.
                block = try SealedBlock(validating: bytes, laning: memory == nil)
            } catch {
                throw CodecError(
                    .malformedPayload, "block \(index) of series \"\(subject)\" (offset \(offset)): \(error.reason)")
            }
            guard block.count <= count - rows else {
                throw CodecError(
                    .malformedPayload, "series \"\(subject)\" has more rows in blocks than its count \(count)")
            }
            rows += block.count
            blocks.append(memory.map { block.moved(to: $0, at: start) } ?? block)
        }
        guard rows == count else {
            throw CodecError(
                .malformedPayload, "series \"\(subject)\" has \(rows) rows in blocks, not its count \(count)")
        }
        return blocks
    }

    /// Bytes gathered before a piece goes to the sink.
    static let pieceSize = 1 << 16

    /// Runs `body` on the bytes of `values` as they lie in memory (little-endian on every platform Swift runs hkd
    /// on), passing its error through with its type.
    static func withBytes<T, Failure: Error>(
        of values: ContiguousArray<T>, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Void
    ) throws(Failure) {
        let outcome: Result<Void, Failure> = values.withUnsafeBytes { raw in
            Result { () throws(Failure) in try body(raw) }
        }
        try outcome.get()
    }

    /// A series' subject, counts, source table, recent batches, sync holders and change log: everything before
    /// the batch table.
    static func writeTables(_ s: SeriesImage, into w: inout ByteWriter) {
        w.writeString(s.subject)
        w.writeVarint(UInt64(s.count))
        w.writeSignedVarint(s.maxDuration)
        w.writeVarint(UInt64(s.sources.count))
        for (source, userEntered) in zip(s.sources, s.userEnteredSources) {
            w.writeSource(source)
            w.writeBool(userEntered)
        }
        w.writeBool(s.priorityOrder != nil)
        if let order = s.priorityOrder { w.writeSources(order) }
        w.writeVarint(UInt64(s.recentBatches.count))
        for batch in s.recentBatches {
            w.writeLE(batch.batchID)
            // Version 5: 0 for a writer an older snapshot did not record, else the writer id + 1.
            w.writeVarint(batch.writer.map { UInt64($0) + 1 } ?? 0)
            w.writeVarint(UInt64(batch.inserted))
            w.writeVarint(UInt64(batch.duplicates))
        }
        w.writeVarint(UInt64(s.syncHolders.count))
        for holder in s.syncHolders {
            w.writeString(holder.sourceKey)
            w.writeString(holder.identifier)
            w.writeSignedVarint(holder.version)
            w.writeUUID(holder.uuid)
            w.writeSignedVarint(holder.start)
        }
        w.writeVarint(s.changeLog.prunedThrough)
        w.writeVarint(UInt64(s.changeLog.deletions.count))
        for record in s.changeLog.deletions {
            w.writeVarint(record.anchor)
            w.writeUUID(record.uuid)
            w.writeString(record.syncIdentifier)
            w.writeSignedVarint(record.syncVersion)
            w.writeSignedVarint(record.start)
            w.writeSignedVarint(record.end)
            w.writeSignedVarint(record.deletedAt)
            w.writeVarint(UInt64(record.writer))
        }
        w.writeVarint(UInt64(s.batches.count))
    }

    /// One batch-table entry up to its list of names (kept UUIDs or element extras, which follow raw).
    static func writeBatchHeader(_ batch: AppliedBatch, into w: inout ByteWriter) {
        w.writeLE(batch.batchID)
        w.writeVarint(batch.firstAnchor)
        w.writeVarint(UInt64(batch.firstRow))
        w.writeVarint(UInt64(batch.count))
        w.writeVarint(UInt64(batch.writer))
        w.write(NamingCode(batch.naming).rawValue)
    }

    /// The byte that says how a batch entry names its rows (Protocol/STORAGE.md, *The batch table*); versions
    /// before 10 write only the first two (a flag: UUIDs kept or not).
    enum NamingCode: UInt8 {
        case batch = 0, kept = 1, content = 2, elements = 3

        init(_ naming: RowNaming) {
            switch naming {
            case .batch: self = .batch
            case .kept: self = .kept
            case .content: self = .content
            case .elements: self = .elements
            }
        }
    }

    /// A decoded snapshot file.
    public struct Decoded: Sendable {
        public var image: ShardImage
        /// The log sequence the image is complete up to.
        public var sequence: UInt64
    }

    /// Decodes a snapshot file. Throws ``CodecError`` naming the byte offset for a bad checksum, truncation or
    /// any count that does not fit in the bytes left; never allocates more than the file's size. With `memory`
    /// (the same bytes, mapped from the file), the sealed blocks are read from there (cold) once checked.
    /// With `extras` (the same mapping), kept UUIDs and element extras are read from there.
    public static func decode(
        _ bytes: [UInt8], blocksIn memory: (any BlockMemory)? = nil, extrasIn extras: (any BlockMemory)? = nil
    ) throws -> Decoded {
        precondition(memory.map { $0.bytes.count == bytes.count } ?? true, "blocks' memory is not the file's bytes")
        precondition(extras.map { $0.bytes.count == bytes.count } ?? true, "extras' memory is not the file's bytes")
        guard bytes.count >= magic.count + 4 else {
            throw CodecError(.malformedPayload, "bad snapshot magic at offset 0")
        }
        let fileMagic = Array(bytes[0..<magic.count])
        let version: Version
        switch fileMagic {
        case magic:
            version = Version(
                hasWriters: true, hasChangeLog: true, hasBatchTable: true, hasBatchWriters: true, hasMetadata: true,
                hasBlocks: true, hasCompleteManualFlags: true, hasDistinctMetadata: true, hasContentNaming: true)
        case magicWithoutContentNaming:
            version = Version(
                hasWriters: true, hasChangeLog: true, hasBatchTable: true, hasBatchWriters: true, hasMetadata: true,
                hasBlocks: true, hasCompleteManualFlags: true, hasDistinctMetadata: true)
        case magicWithMetadataPerRow:
            version = Version(
                hasWriters: true, hasChangeLog: true, hasBatchTable: true, hasBatchWriters: true, hasMetadata: true,
                hasBlocks: true, hasCompleteManualFlags: true)
        case magicWithEarlierManualFlags:
            version = Version(
                hasWriters: true, hasChangeLog: true, hasBatchTable: true, hasBatchWriters: true, hasMetadata: true,
                hasBlocks: true)
        case magicWithRawColumns:
            version = Version(
                hasWriters: true, hasChangeLog: true, hasBatchTable: true, hasBatchWriters: true, hasMetadata: true)
        case magicWithoutMetadata:
            version = Version(hasWriters: true, hasChangeLog: true, hasBatchTable: true, hasBatchWriters: true)
        case magicWithoutBatchWriters:
            version = Version(hasWriters: true, hasChangeLog: true, hasBatchTable: true, hasBatchWriters: false)
        case magicWithUUIDColumn:
            version = Version(hasWriters: true, hasChangeLog: true, hasBatchTable: false, hasBatchWriters: false)
        case magicWithoutChangeLog:
            version = Version(hasWriters: true, hasChangeLog: false, hasBatchTable: false, hasBatchWriters: false)
        case magicWithoutWriters:
            version = Version(hasWriters: false, hasChangeLog: false, hasBatchTable: false, hasBatchWriters: false)
        default: throw CodecError(.malformedPayload, "bad snapshot magic at offset 0")
        }
        let hasChangeLog = version.hasChangeLog
        let body = bytes.count - 4
        let stored = UInt32(
            littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: body, as: UInt32.self) })
        let actual = bytes.withUnsafeBytes { Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[..<body])) }
        guard stored == actual else {
            throw CodecError(.malformedPayload, "snapshot checksum mismatch (stored at offset \(body))")
        }
        var r = ByteReader(bytes, offset: magic.count, endIndex: body)
        let identifier = try r.readString(limit: 256)
        let type: QuantityType
        do {
            type = try QuantityType.named(identifier)
        } catch {
            throw CodecError(.malformedPayload, "unknown quantity type \"\(identifier)\" in snapshot")
        }
        let sequence = try r.readLE(UInt64.self)
        let lastAnchor = hasChangeLog ? try r.readLE(UInt64.self) : 0
        let seriesCount = try r.readCount("series count", limit: r.remaining)
        var series: [SeriesImage] = []
        for _ in 0..<seriesCount { series.append(try readSeries(&r, version, blocksIn: memory, extrasIn: extras)) }
        try r.expectEnd("the snapshot")
        return Decoded(image: ShardImage(type: type, series: series, lastAnchor: lastAnchor), sequence: sequence)
    }

    /// What a file version holds besides the version 1 fields.
    struct Version {
        /// Writers (a column in versions 2 and 3, in the batch table in version 4).
        var hasWriters: Bool
        /// The newest anchor, deletion records and arrival column (versions 3 and 4).
        var hasChangeLog: Bool
        /// The batch table instead of UUID and writer columns (versions 4 and 5).
        var hasBatchTable: Bool
        /// Recent batches carry their writer (versions 5 to 8).
        var hasBatchWriters: Bool
        /// A metadata table follows each series' rows (versions 6 to 8).
        var hasMetadata = false
        /// Rows in sealed blocks instead of raw columns (versions 7 and 8).
        var hasBlocks = false
        /// The sources' user-entered flags count every key HEALTHKIT.md §8 names (versions 8 and 9); earlier
        /// versions' are completed from the metadata table when the image is restored.
        var hasCompleteManualFlags = false
        /// The metadata table holds each distinct metadata row once (versions 9 and 10).
        var hasDistinctMetadata = false
        /// Batch entries may name their rows by content (version 10; before, a flag: kept UUIDs or none).
        var hasContentNaming = false
        /// Column bytes per sample.
        var columnBytes: Int {
            hasBatchTable ? SnapshotCodec.columnBytes : 42 + (hasWriters ? 4 : 0) + (hasChangeLog ? 8 : 0)
        }
    }

    static func readSeries(
        _ r: inout ByteReader, _ version: Version, blocksIn memory: (any BlockMemory)? = nil,
        extrasIn extras: (any BlockMemory)? = nil
    ) throws -> SeriesImage {
        let hasWriters = version.hasWriters
        let hasChangeLog = version.hasChangeLog
        let subject = try r.readString(limit: SampleRules.maxSubjectLength)
        // A sealed block holds at most SealedBlock.maxRows rows in at least minimumBlockBytes bytes.
        let countLimit =
            version.hasBlocks
            ? r.remaining / minimumBlockBytes * SealedBlock.maxRows : r.remaining / version.columnBytes
        let count = try r.readCount("sample count", limit: countLimit)
        let maxDuration = try r.readSignedVarint()
        let sourceCount = try r.readCount("source count", limit: min(r.remaining / 5, Int(UInt16.max) + 1))
        var sources: [SourceInfo] = []
        var userEntered: [Bool] = []
        for _ in 0..<sourceCount {
            sources.append(try r.readSource(FieldCaps.storage))
            userEntered.append(try r.readBool())
        }
        var order: [SourceInfo]?
        if try r.readBool() { order = try r.readSources(FieldCaps.storage) }
        let batchCount = try r.readCount("recent batch count", limit: r.remaining / 10)
        var batches: [SeriesImage.RecentBatch] = []
        for _ in 0..<batchCount {
            let batchID = try r.readLE(UInt64.self)
            var writer: UInt32?
            if version.hasBatchWriters {
                let stored = try r.readVarint()
                guard stored <= UInt64(UInt32.max) + 1 else {
                    throw CodecError(.malformedPayload, "recent batch writer \(stored) out of range")
                }
                writer = stored == 0 ? nil : UInt32(stored - 1)
            }
            batches.append(
                .init(
                    batchID: batchID, writer: writer, inserted: Int(try r.readVarint() & 0xFFFF_FFFF),
                    duplicates: Int(try r.readVarint() & 0xFFFF_FFFF)))
        }
        let holderCount = try r.readCount("sync holder count", limit: r.remaining / 20)
        var holders: [SeriesImage.SyncHolder] = []
        for _ in 0..<holderCount {
            holders.append(
                .init(
                    sourceKey: try r.readString(), identifier: try r.readString(), version: try r.readSignedVarint(),
                    uuid: try r.readUUID(), start: try r.readSignedVarint()))
        }
        var changeLog = SeriesChangeLog()
        if hasChangeLog { changeLog = try readChangeLog(&r) }
        if version.hasBlocks {
            let table = try readBatchTable(&r, contentNaming: version.hasContentNaming, extrasIn: extras)
            let blocks = try readBlocks(&r, count: count, subject: subject, blocksIn: memory)
            var image = SeriesImage(
                subject: subject, blocks: blocks, batches: table, maxDuration: maxDuration, sources: sources,
                userEnteredSources: userEntered,
                priorityOrder: order, recentBatches: batches, syncHolders: holders, changeLog: changeLog)
            // readBlocks checked every block's rows: restoring reads only their anchors again.
            image.rowsChecked = true
            if version.hasMetadata { image.metadata = try readMetadataTable(&r, distinct: version.hasDistinctMetadata) }
            image.userEnteredFromMetadata = !version.hasCompleteManualFlags
            return image
        }
        if version.hasBatchTable {
            let table = try readBatchTable(&r, contentNaming: version.hasContentNaming)
            var image = try checkedRows(
                SeriesImage(
                    subject: subject, starts: try readRaw(&r, count), ends: try readRaw(&r, count),
                    values: try readRaw(&r, count), sourceIDs: try readRaw(&r, count), arrivals: try readRaw(&r, count),
                    batches: table, maxDuration: maxDuration, sources: sources, userEnteredSources: userEntered,
                    priorityOrder: order, recentBatches: batches, syncHolders: holders, changeLog: changeLog))
            if version.hasMetadata { image.metadata = try readMetadataTable(&r, distinct: false) }
            image.userEnteredFromMetadata = true
            return image
        }
        let starts: ContiguousArray<Timestamp> = try readRaw(&r, count)
        let ends: ContiguousArray<Timestamp> = try readRaw(&r, count)
        let values: ContiguousArray<Double> = try readRaw(&r, count)
        let sourceIDs: ContiguousArray<UInt16> = try readRaw(&r, count)
        let uuids: ContiguousArray<UUID> = try readRaw(&r, count)
        let writers: ContiguousArray<UInt32>? = hasWriters ? try readRaw(&r, count) : nil
        let arrivals: ContiguousArray<UInt64>? = hasChangeLog ? try readRaw(&r, count) : nil
        do {
            return try checkedRows(
                SeriesImage(
                    subject: subject, starts: starts, ends: ends, values: values, sourceIDs: sourceIDs, uuids: uuids,
                    writers: writers, arrivals: arrivals, maxDuration: maxDuration, sources: sources,
                    userEnteredSources: userEntered, priorityOrder: order, recentBatches: batches,
                    syncHolders: holders, changeLog: changeLog))
        } catch let error as HealthError {
            throw CodecError(.malformedPayload, error.message)
        }
    }

    /// `image`, made from an older file's raw columns, once its blocks hold rows sealed blocks may hold (instants
    /// within years 0001–9999, no end before its start, starts ascending, finite values): a version 8 file is
    /// read with that check, so rows that break it are damage in any version, and an image that decodes always
    /// encodes to a file that decodes.
    static func checkedRows(_ image: SeriesImage) throws -> SeriesImage {
        var firstRow = 0
        for block in image.blocks {
            do {
                try block.checkInvariants()
            } catch {
                throw CodecError(
                    .malformedPayload,
                    "series \"\(image.subject)\", block of rows from \(firstRow): \(error.reason)")
            }
            firstRow += block.count
        }
        return image
    }

    /// A version 6 or 7 series' metadata table: a blob holding a ``MetadataTable`` (rows within the batch limits
    /// they were accepted with).
    static func readMetadataTable(_ r: inout ByteReader, distinct: Bool) throws -> SeriesMetadata {
        let blob = try r.readBlob(limit: r.remaining)
        guard distinct else { return SeriesMetadata(try MetadataTable.decode(blob)) }
        let table = try MetadataTable.decodeDistinct(blob)
        return SeriesMetadata(distinct: table.distinct, anchors: table.anchors, indices: table.indices)
    }

    /// The batch table of a series of version 4 or later (each entry at least 14 bytes); naming codes 2 and 3
    /// only with `contentNaming` (version 10).
    /// With `memory` (the file's bytes, mapped), kept UUIDs and element extras are read in place from there.
    static func readBatchTable(
        _ r: inout ByteReader, contentNaming: Bool, extrasIn memory: (any BlockMemory)? = nil
    ) throws -> [AppliedBatch] {
        let count = try r.readCount("batch count", limit: r.remaining / 14)
        var table: [AppliedBatch] = []
        table.reserveCapacity(count)
        for _ in 0..<count {
            let batchID = try r.readLE(UInt64.self)
            let firstAnchor = try r.readVarint()
            let firstRow = try readUInt32(&r, "batch first row")
            let rows = try readUInt32(&r, "batch row count")
            let writer = try readUInt32(&r, "batch writer")
            let offset = r.offset
            let byte = try r.readByte()
            guard let code = NamingCode(rawValue: byte), contentNaming || code.rawValue <= 1 else {
                throw CodecError(.malformedPayload, "batch \(batchID) has naming \(byte) at offset \(offset)")
            }
            let naming: RowNaming
            switch code {
            case .batch: naming = .batch
            case .content: naming = .content
            case .kept: naming = .kept(try readNames(&r, Int(rows), of: batchID, in: memory))
            case .elements: naming = .elements(try readNames(&r, Int(rows), of: batchID, in: memory))
            }
            table.append(
                AppliedBatch(
                    batchID: batchID, firstAnchor: firstAnchor, firstRow: firstRow, count: rows, writer: writer,
                    naming: naming))
        }
        return table
    }

    /// The `count` names a batch entry lists (raw, as ``NameList/withBytes(_:)`` writes them): read in place from
    /// `memory` when given, as cold blocks are (the page cache decides what stays resident), else copied.
    static func readNames<Name>(_ r: inout ByteReader, _ count: Int, of batchID: UInt64, in memory: (any BlockMemory)?)
        throws -> NameList<Name>
    {
        guard count <= r.remaining / Name.byteCount else {
            throw CodecError(.malformedPayload, "batch \(batchID) lists \(count) names beyond the file's end")
        }
        guard let memory else { return NameList(try readRaw(&r, count)) }
        let names = NameList<Name>(memory: memory, offset: r.offset, count: count)
        _ = try r.readBytes(count * Name.byteCount)
        return names
    }

    /// A varint that must fit in 32 bits.
    static func readUInt32(_ r: inout ByteReader, _ what: String) throws -> UInt32 {
        let value = try r.readVarint()
        guard let narrow = UInt32(exactly: value) else {
            throw CodecError(.malformedPayload, "\(what) \(value) does not fit in 32 bits")
        }
        return narrow
    }

    /// The pruned anchor and the deletion records (anchors must increase).
    static func readChangeLog(_ r: inout ByteReader) throws -> SeriesChangeLog {
        let prunedThrough = try r.readVarint()
        let count = try r.readCount("deletion count", limit: r.remaining / 23)
        var deletions: [DeletionRecord] = []
        deletions.reserveCapacity(count)
        for _ in 0..<count {
            let record = DeletionRecord(
                anchor: try r.readVarint(), uuid: try r.readUUID(), syncIdentifier: try r.readString(),
                syncVersion: try r.readSignedVarint(), start: try r.readSignedVarint(), end: try r.readSignedVarint(),
                deletedAt: try r.readSignedVarint(), writer: try readUInt32(&r, "deletion writer"))
            if let previous = deletions.last, previous.anchor >= record.anchor {
                throw CodecError(.malformedPayload, "deletion anchors not increasing at \(record.anchor)")
            }
            deletions.append(record)
        }
        return SeriesChangeLog(deletions: deletions, prunedThrough: prunedThrough)
    }

    /// Reads `count` elements laid out as ``encode(_:sequence:to:)`` wrote them.
    static func readRaw<T>(_ r: inout ByteReader, _ count: Int) throws -> ContiguousArray<T> {
        let size = count * MemoryLayout<T>.stride
        let slice = try r.readBytes(size)
        return ContiguousArray<T>(unsafeUninitializedCapacity: count) { buffer, initialized in
            slice.withUnsafeBytes { raw in
                UnsafeMutableRawBufferPointer(buffer).copyMemory(from: raw)
            }
            initialized = count
        }
    }
}
