import HealthCodec
import HealthModel

/// One file inside a zip, as the central directory describes it.
struct ZipEntry: Equatable {
    /// Path inside the archive, e.g. `apple_health_export/export.xml`.
    var name: String
    /// General-purpose flags (bit 0: encrypted).
    var flags: UInt16
    /// 0 stored, 8 deflated.
    var method: UInt16
    /// CRC-32 of the uncompressed bytes.
    var crc32: UInt32
    /// Bytes the entry occupies in the archive.
    var compressedSize: Int64
    /// Bytes it holds once inflated.
    var uncompressedSize: Int64
    /// Where its local header starts.
    var localHeaderOffset: Int64

    /// The last part of its name (`export.xml`), for messages.
    var fileName: String { String(name.split(separator: "/").last ?? Substring(name)) }
}

/// Reads a zip's central directory from the end of the file (zip64 included) to find export.xml.
///
/// Only the directory and one local header are read, never the archive as a whole. Every offset and size is
/// checked against the file before use.
enum ZipDirectory {
    private static let endSignature: UInt32 = 0x0605_4b50
    private static let zip64LocatorSignature: UInt32 = 0x0706_4b50
    private static let zip64EndSignature: UInt32 = 0x0606_4b50
    private static let centralSignature: UInt32 = 0x0201_4b50
    private static let localSignature: UInt32 = 0x0403_4b50
    /// The end record is 22 bytes plus a comment of at most 65,535.
    private static let endSearchLength = 22 + 65_535
    /// The directory is read in pieces this large.
    private static let readChunk = 1 << 20

    /// Where the central directory is.
    struct Directory {
        var entryCount: Int64
        var offset: Int64
        var size: Int64
    }

    /// Whether the file opens like a zip (a local header, or an empty archive's end record).
    static func looksLikeZip(_ prefix: [UInt8]) -> Bool {
        prefix.count >= 4 && prefix[0] == 0x50 && prefix[1] == 0x4B
            && ((prefix[2] == 3 && prefix[3] == 4) || (prefix[2] == 5 && prefix[3] == 6))
    }

    /// The export.xml entry: `apple_health_export/export.xml` if present, else the first `*/export.xml` or
    /// `export.xml`; `nil` when the archive has none.
    static func findExport(in file: ExportFile) throws -> ZipEntry? {
        var best: ZipEntry?
        var found: ZipEntry?
        try forEachEntry(in: file) { entry in
            if entry.name == "apple_health_export/export.xml" {
                found = entry
                return false
            }
            if best == nil, entry.name == "export.xml" || entry.name.hasSuffix("/export.xml"),
                !entry.name.hasPrefix("__MACOSX/")
            {
                best = entry
            }
            return true
        }
        return found ?? best
    }

    /// Calls `body` with each entry of the central directory, in order, until it returns `false`.
    static func forEachEntry(in file: ExportFile, _ body: (ZipEntry) throws -> Bool) throws {
        let directory = try locateDirectory(in: file)
        var offset = directory.offset
        let end = directory.offset + directory.size
        var buffer: [UInt8] = []
        var bufferStart = offset
        /// Makes sure bytes offset..<offset+n are in the buffer, reading a MiB of the directory at a time.
        func ensure(_ n: Int) throws {
            guard offset + Int64(n) > bufferStart + Int64(buffer.count) else { return }
            let length = Int(min(max(Int64(n), Int64(readChunk)), end - offset))
            guard length >= n else { throw damaged(file, "a directory entry runs past the directory") }
            buffer = try file.read(exactly: length, at: offset, what: "the zip directory")
            bufferStart = offset
        }
        var seen: Int64 = 0
        while seen < directory.entryCount, offset < end {
            try ensure(46)
            var header = ByteReader(buffer, offset: Int(offset - bufferStart))
            let recordLength = try headerLength(&header, file: file)
            try ensure(recordLength)
            let entry = try parseEntry(buffer, at: Int(offset - bufferStart), file: file)
            guard try body(entry) else { return }
            offset += Int64(recordLength)
            seen += 1
        }
    }

    /// Where the entry's data starts, after its local header; checks the data lies inside the file.
    static func dataOffset(of entry: ZipEntry, in file: ExportFile) throws -> Int64 {
        let name = entry.fileName
        let header = try file.read(exactly: 30, at: entry.localHeaderOffset, what: "the local header of \(name)")
        var reader = ByteReader(header)
        guard try reader.readLE(UInt32.self) == localSignature else {
            throw damaged(file, "\(name) has no local header where the directory says")
        }
        reader = ByteReader(header, offset: 26)
        let nameLength = Int64(try reader.readLE(UInt16.self))
        let extraLength = Int64(try reader.readLE(UInt16.self))
        let start = entry.localHeaderOffset + 30 + nameLength + extraLength
        guard start <= file.size, entry.compressedSize <= file.size - start else {
            throw damaged(file, "\(name) runs past the end of the file")
        }
        return start
    }

    // MARK: - End records

    private static func locateDirectory(in file: ExportFile) throws -> Directory {
        let tailLength = Int(min(file.size, Int64(endSearchLength)))
        let tailStart = file.size - Int64(tailLength)
        let tail = try file.read(exactly: tailLength, at: tailStart, what: "the end of the file")
        guard let endOffset = findEndRecord(tail) else {
            throw damaged(file, "no end-of-central-directory record")
        }
        var end = ByteReader(tail, offset: endOffset + 10)
        var directory = Directory(
            entryCount: Int64(try end.readLE(UInt16.self)), offset: 0, size: Int64(try end.readLE(UInt32.self)))
        directory.offset = Int64(try end.readLE(UInt32.self))
        if directory.entryCount == 0xFFFF || directory.size == 0xFFFF_FFFF || directory.offset == 0xFFFF_FFFF {
            directory = try readZip64End(file, endRecordAt: tailStart + Int64(endOffset))
        }
        guard directory.offset >= 0, directory.size >= 0, directory.offset <= file.size,
            directory.size <= file.size - directory.offset
        else { throw damaged(file, "the central directory lies outside the file") }
        return directory
    }

    /// The offset in `tail` of the last end record whose comment fits in the file.
    private static func findEndRecord(_ tail: [UInt8]) -> Int? {
        guard tail.count >= 22 else { return nil }
        var i = tail.count - 22
        while i >= 0 {
            if tail[i] == 0x50, tail[i + 1] == 0x4B, tail[i + 2] == 5, tail[i + 3] == 6 {
                let commentLength = Int(tail[i + 20]) | Int(tail[i + 21]) << 8
                if i + 22 + commentLength <= tail.count { return i }
            }
            i -= 1
        }
        return nil
    }

    private static func readZip64End(_ file: ExportFile, endRecordAt: Int64) throws -> Directory {
        guard endRecordAt >= 20 else { throw damaged(file, "the zip64 locator is missing") }
        var locator = ByteReader(try file.read(exactly: 20, at: endRecordAt - 20, what: "the zip64 locator"))
        guard try locator.readLE(UInt32.self) == zip64LocatorSignature else {
            throw damaged(file, "the zip64 locator is missing")
        }
        _ = try locator.readLE(UInt32.self)
        let recordOffset = try locator.readLE(UInt64.self)
        guard recordOffset <= UInt64(endRecordAt) else {
            throw damaged(file, "the zip64 end record lies outside the file")
        }
        var record = ByteReader(try file.read(exactly: 56, at: Int64(recordOffset), what: "the zip64 end record"))
        guard try record.readLE(UInt32.self) == zip64EndSignature else {
            throw damaged(file, "no zip64 end record where the locator says")
        }
        record = ByteReader(record.bytes, offset: 32)
        let count = try record.readLE(UInt64.self)
        let size = try record.readLE(UInt64.self)
        let offset = try record.readLE(UInt64.self)
        guard count <= UInt64(Int64.max), size <= UInt64(file.size), offset <= UInt64(file.size) else {
            throw damaged(file, "the zip64 end record holds impossible sizes")
        }
        return Directory(entryCount: Int64(count), offset: Int64(offset), size: Int64(size))
    }

    // MARK: - Directory entries

    /// Length of the directory entry at the reader: 46 bytes plus its name, extra field and comment.
    private static func headerLength(_ reader: inout ByteReader, file: ExportFile) throws -> Int {
        let start = reader.offset
        guard try reader.readLE(UInt32.self) == centralSignature else {
            throw damaged(file, "a central directory entry has a bad signature")
        }
        reader = ByteReader(reader.bytes, offset: start + 28)
        let name = Int(try reader.readLE(UInt16.self))
        let extra = Int(try reader.readLE(UInt16.self))
        let comment = Int(try reader.readLE(UInt16.self))
        return 46 + name + extra + comment
    }

    private static func parseEntry(_ bytes: [UInt8], at start: Int, file: ExportFile) throws -> ZipEntry {
        do {
            var reader = ByteReader(bytes, offset: start + 8)
            let flags = try reader.readLE(UInt16.self)
            let method = try reader.readLE(UInt16.self)
            reader = ByteReader(bytes, offset: start + 16)
            let crc = try reader.readLE(UInt32.self)
            var compressed = UInt64(try reader.readLE(UInt32.self))
            var uncompressed = UInt64(try reader.readLE(UInt32.self))
            let nameLength = Int(try reader.readLE(UInt16.self))
            let extraLength = Int(try reader.readLE(UInt16.self))
            reader = ByteReader(bytes, offset: start + 42)
            var localOffset = UInt64(try reader.readLE(UInt32.self))
            let name = String(decoding: try reader.readBytes(nameLength), as: UTF8.self)
            var extra = ByteReader(bytes, offset: reader.offset, endIndex: reader.offset + extraLength)
            // The zip64 extra field (id 1) holds, in this order, whichever of the three sizes are 0xFFFFFFFF.
            while extra.remaining >= 4 {
                let id = try extra.readLE(UInt16.self)
                let length = Int(try extra.readLE(UInt16.self))
                var field = ByteReader(Array(try extra.readBytes(length)))
                guard id == 1 else { continue }
                if uncompressed == 0xFFFF_FFFF { uncompressed = try field.readLE(UInt64.self) }
                if compressed == 0xFFFF_FFFF { compressed = try field.readLE(UInt64.self) }
                if localOffset == 0xFFFF_FFFF { localOffset = try field.readLE(UInt64.self) }
            }
            let limit = UInt64(Int64.max)
            guard compressed <= limit, uncompressed <= limit, localOffset < UInt64(file.size) else {
                throw damaged(file, "the entry \(name) has impossible sizes or offset")
            }
            return ZipEntry(
                name: name, flags: flags, method: method, crc32: crc, compressedSize: Int64(compressed),
                uncompressedSize: Int64(uncompressed), localHeaderOffset: Int64(localOffset))
        } catch let error as CodecError {
            throw damaged(file, "a directory entry is malformed (\(error.message))")
        }
    }

    private static func damaged(_ file: ExportFile, _ problem: String) -> HealthError {
        HealthError(.malformedPayload, "\(file.displayName) is truncated or not a valid zip (\(problem))")
    }
}
