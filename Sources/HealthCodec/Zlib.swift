import CZlib
import Foundation
import HealthModel

/// The container around a deflate stream.
public enum ZlibFormat: Sendable, Hashable, CaseIterable {
    /// RFC 1950: 2-byte header, deflate data, Adler-32 trailer (what frames carry).
    case zlib
    /// RFC 1951 deflate data with no header or trailer (what zip entries hold).
    case raw
    /// RFC 1952: gzip header, deflate data, CRC-32 and size trailer.
    case gzip

    /// zlib's `windowBits` for a 32 KB window in this format.
    var windowBits: Int32 {
        switch self {
        case .zlib: 15
        case .raw: -15
        case .gzip: 31
        }
    }
}

/// One-shot deflate and inflate with size caps, and CRC-32, over the system zlib.
///
/// Stateless and thread-safe: every call uses its own stream. Reuse a ``Deflater`` or ``Inflater`` to avoid
/// zlib's per-stream set-up on hot paths.
public enum Zlib {
    /// Compresses `input` in one call at `level` (0 none, 1 fastest, the default, … 9 smallest).
    public static func deflate(_ input: some ContiguousBytes, level: Int = 1, format: ZlibFormat = .zlib) -> [UInt8] {
        Deflater(level: level, format: format).deflate(input)
    }

    /// Decompresses one complete stream of `format` holding at most `maxOutput` bytes.
    ///
    /// Throws ``CodecError`` with ``ErrorCode/inflatedTooLarge`` as soon as the output passes `maxOutput` (never
    /// allocating more than that), and ``ErrorCode/malformedPayload`` for corrupt or truncated data or bytes after
    /// the end of the stream.
    public static func inflate(
        _ input: some ContiguousBytes, maxOutput: Int, format: ZlibFormat = .zlib
    ) throws -> [UInt8] {
        let inflater = Inflater(format: format, maxOutput: maxOutput)
        var output: [UInt8] = []
        let (consumed, total) = try input.withUnsafeBytes { bytes in
            (try inflater.inflate(bytes, into: &output), bytes.count)
        }
        try inflater.finish()
        guard consumed == total else {
            throw CodecError(.malformedPayload, "zlib: \(total - consumed) bytes after the end of the stream")
        }
        return output
    }

    /// The CRC-32 (ISO-HDLC, as in gzip and zip) of `bytes`, continuing from `initial` (pass a previous result to
    /// checksum data in pieces).
    public static func crc32(_ bytes: some ContiguousBytes, initial: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return initial }
            let pointer = base.assumingMemoryBound(to: Bytef.self)
            return UInt32(truncatingIfNeeded: crc32_z(uLong(initial), pointer, z_size_t(raw.count)))
        }
    }

    /// The message zlib left in `stream`, or a description of `code`.
    static func message(_ stream: UnsafeMutablePointer<z_stream>, code: Int32) -> String {
        if let msg = stream.pointee.msg { return "zlib: " + String(cString: msg) }
        switch code {
        case Z_DATA_ERROR: return "zlib: corrupt data"
        case Z_MEM_ERROR: return "zlib: out of memory"
        case Z_NEED_DICT: return "zlib: the stream needs a preset dictionary"
        case Z_BUF_ERROR: return "zlib: truncated stream"
        default: return "zlib: error \(code)"
        }
    }
}
