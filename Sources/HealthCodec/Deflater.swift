import CZlib
import Foundation

/// A reusable deflate stream: each ``deflate(_:)`` compresses one whole message.
///
/// Not thread-safe: use one instance from one thread at a time. The `z_stream` lives in heap memory this object
/// owns, so it never moves after zlib initialised it.
public final class Deflater {
    /// The compression level (0…9).
    public let level: Int
    /// The container the output is wrapped in.
    public let format: ZlibFormat
    private let stream: UnsafeMutablePointer<z_stream>

    /// Prepares a stream at `level` (0 none, 1 fastest … 9 smallest) producing `format`.
    public init(level: Int = 1, format: ZlibFormat = .zlib) {
        precondition((0...9).contains(level), "deflate level \(level) is outside 0...9")
        self.level = level
        self.format = format
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let rc = hk_deflateInit2(stream, Int32(level), format.windowBits)
        // Only memory exhaustion can fail here: the arguments are valid by construction.
        precondition(rc == Z_OK, "deflateInit2 failed: \(rc)")
    }

    deinit {
        CZlib.deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses `input` into one complete stream (inputs up to 1 GiB).
    public func deflate(_ input: some ContiguousBytes) -> [UInt8] {
        input.withUnsafeBytes { raw in
            precondition(raw.count <= 1 << 30, "deflate input of \(raw.count) bytes is over 1 GiB")
            CZlib.deflateReset(stream)
            let bound = Int(deflateBound(stream, uLong(raw.count)))
            return [UInt8](unsafeUninitializedCapacity: bound) { out, count in
                stream.pointee.next_in = raw.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_in = uInt(raw.count)
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = uInt(bound)
                let rc = CZlib.deflate(stream, Z_FINISH)
                // deflateBound guarantees room for the whole stream in one call.
                precondition(rc == Z_STREAM_END, "deflate did not finish: \(rc)")
                count = bound - Int(stream.pointee.avail_out)
                stream.pointee.next_in = nil
                stream.pointee.next_out = nil
            }
        }
    }
}
