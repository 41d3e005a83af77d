import Foundation
import HealthCodec
import HealthModel

/// The bytes of export.xml, produced piece by piece from the file being imported. Not thread-safe.
protocol ExportByteSource: AnyObject {
    /// Appends the next bytes of export.xml to `output`, or returns `false` once they are exhausted (and, for a
    /// zip entry, their size and CRC-32 verified). Throws a ``HealthError`` for damaged or truncated data.
    func read(into output: inout [UInt8]) throws -> Bool
    /// Bytes of the file consumed so far.
    var bytesRead: Int64 { get }
    /// Bytes of the file there are to consume.
    var totalBytes: Int64 { get }
}

/// Opens the right ``ExportByteSource`` for a file: a zip holding export.xml, or a plain export.xml.
enum ExportSourceOpener {
    /// The source of export.xml in the file at `file`; throws ``ErrorCode/invalidArgument`` when it is neither.
    static func open(_ file: ExportFile) throws -> ExportByteSource {
        let prefix = [UInt8](try file.read(at: 0, count: 64))
        if ZipDirectory.looksLikeZip(prefix) {
            guard let entry = try ZipDirectory.findExport(in: file) else { throw notAnExport(file) }
            return try ZipEntryByteSource(file: file, entry: entry)
        }
        if looksLikeXML(prefix) { return PlainFileByteSource(file: file) }
        throw notAnExport(file)
    }

    /// The error for a file that is neither a zip with export.xml nor an XML file.
    static func notAnExport(_ file: ExportFile) -> HealthError {
        HealthError(
            .invalidArgument,
            "\(file.displayName) is not an Apple Health export (no apple_health_export/export.xml inside)")
    }

    /// Whether the file starts, after an optional byte order mark and white space, with `<`.
    private static func looksLikeXML(_ prefix: [UInt8]) -> Bool {
        var bytes = prefix[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.first(where: { !ASCII.isSpace($0) }) == ASCII.lessThan
    }
}

/// Bytes read from the file in pieces of this size.
private let fileChunkSize = 1 << 20
/// Compressed bytes handed to zlib per call, which bounds what one call can inflate to (about 16 MB even for
/// the most compressible input).
private let inflateSliceSize = 16 * 1024

/// A plain export.xml, read a MiB at a time.
final class PlainFileByteSource: ExportByteSource {
    private let file: ExportFile
    private(set) var bytesRead: Int64 = 0
    var totalBytes: Int64 { file.size }

    init(file: ExportFile) { self.file = file }

    func read(into output: inout [UInt8]) throws -> Bool {
        guard bytesRead < file.size else { return false }
        let chunk = try file.read(at: bytesRead, count: fileChunkSize)
        guard !chunk.isEmpty else { return false }
        output.append(contentsOf: chunk)
        bytesRead += Int64(chunk.count)
        return true
    }
}

/// export.xml inside a zip, stored or deflated, streamed through zlib with its CRC-32 checked at the end.
final class ZipEntryByteSource: ExportByteSource {
    private let file: ExportFile
    private let entry: ZipEntry
    private let dataStart: Int64
    private let inflater: Inflater?
    /// Compressed bytes read from the file and not yet handed to zlib.
    private var input = Data()
    private var inputPosition = 0
    private var crc: UInt32 = 0
    private var produced: Int64 = 0
    private var finished = false
    private(set) var bytesRead: Int64 = 0
    var totalBytes: Int64 { entry.compressedSize }

    init(file: ExportFile, entry: ZipEntry) throws {
        guard entry.flags & 1 == 0 else {
            throw HealthError(.invalidArgument, "\(file.displayName): \(entry.fileName) is encrypted")
        }
        switch entry.method {
        case 0: inflater = nil
        case 8: inflater = Inflater(format: .raw, maxOutput: Int(clamping: entry.uncompressedSize))
        default:
            throw HealthError(
                .invalidArgument,
                "\(file.displayName): \(entry.fileName) uses compression method \(entry.method), not deflate"
            )
        }
        self.file = file
        self.entry = entry
        dataStart = try ZipDirectory.dataOffset(of: entry, in: file)
    }

    func read(into output: inout [UInt8]) throws -> Bool {
        while !finished {
            if isStreamDone {
                try verify()
                finished = true
                return false
            }
            if inputPosition == input.count { try refill() }
            let slice = min(inflateSliceSize, input.count - inputPosition)
            let before = output.count
            let used: Int
            if let inflater {
                used = try input.withUnsafeBytes { raw in
                    do {
                        return try inflater.inflate(
                            UnsafeRawBufferPointer(rebasing: raw[inputPosition..<inputPosition + slice]), into: &output)
                    } catch let error as CodecError {
                        throw damaged(
                            error.code == .inflatedTooLarge ? "it inflates past its declared size" : error.message)
                    }
                }
            } else {
                input.withUnsafeBytes { raw in
                    output.append(
                        contentsOf: UnsafeRawBufferPointer(rebasing: raw[inputPosition..<inputPosition + slice]))
                }
                used = slice
            }
            inputPosition += used
            bytesRead += Int64(used)
            if inflater?.isFinished == true { inputPosition = input.count }
            if output.count > before {
                crc = output.withUnsafeBytes {
                    Zlib.crc32(UnsafeRawBufferPointer(rebasing: $0[before...]), initial: crc)
                }
                produced += Int64(output.count - before)
                return true
            }
        }
        return false
    }

    /// Whether the entry has nothing more to give: the deflate stream ended, or every stored byte was copied.
    private var isStreamDone: Bool {
        if let inflater { return inflater.isFinished }
        return bytesRead == entry.compressedSize
    }

    /// Reads the next MiB of the entry's compressed bytes.
    private func refill() throws {
        let remaining = entry.compressedSize - bytesRead
        guard remaining > 0 else { throw damaged("the deflate stream ends early") }
        let count = Int(min(remaining, Int64(fileChunkSize)))
        input = try file.read(at: dataStart + bytesRead, count: count)
        inputPosition = 0
        guard input.count == count else {
            throw HealthError(.malformedPayload, "\(file.displayName) is truncated (\(entry.fileName) is cut off)")
        }
    }

    private func verify() throws {
        guard produced == entry.uncompressedSize else {
            throw damaged("it holds \(produced) bytes, its directory entry says \(entry.uncompressedSize)")
        }
        guard crc == entry.crc32 else {
            throw damaged(
                "CRC-32 mismatch: computed \(String(crc, radix: 16)), expected \(String(entry.crc32, radix: 16))")
        }
    }

    private func damaged(_ problem: String) -> HealthError {
        HealthError(.malformedPayload, "\(file.displayName): \(entry.fileName) is damaged (\(problem))")
    }
}
