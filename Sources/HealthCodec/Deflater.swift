import CZlib
import Foundation

/// A reusable deflate stream: each ``deflate(_:)`` compresses one whole message; or a stream fed in pieces,
/// ``compress(_:flush:)`` returning the output zlib has ready and ``finish()`` the rest and the trailer, memory
/// staying zlib's window and state whatever the total length (a streamed HTTP body compressed with gzip).
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

    /// Compresses `input` as the next piece of a stream; returns the compressed bytes ready so far (often none:
    /// zlib gathers a block). With `flush`, everything given so far comes out (a sync flush: the reader can
    /// decompress it now).
    public func compress(_ input: UnsafeRawBufferPointer, flush: Bool = false) -> [UInt8] {
        run(input, mode: flush ? Z_SYNC_FLUSH : Z_NO_FLUSH)
    }

    /// Ends the stream ``compress(_:flush:)`` fed: the remaining compressed bytes and the format's trailer. The
    /// next piece starts a new stream.
    public func finish() -> [UInt8] {
        defer { CZlib.deflateReset(stream) }
        return run(UnsafeRawBufferPointer(start: nil, count: 0), mode: Z_FINISH)
    }

    /// Runs deflate over `input` with `mode` until it has taken all of it and has no more output to give.
    private func run(_ input: UnsafeRawBufferPointer, mode: Int32) -> [UInt8] {
        var output: [UInt8] = []
        var piece = [UInt8](repeating: 0, count: 64 * 1024)
        stream.pointee.next_in = input.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_in = uInt(input.count)
        defer { stream.pointee.next_in = nil }
        while true {
            let (rc, produced) = piece.withUnsafeMutableBufferPointer { buffer in
                stream.pointee.next_out = buffer.baseAddress
                stream.pointee.avail_out = uInt(buffer.count)
                defer { stream.pointee.next_out = nil }
                let rc = CZlib.deflate(stream, mode)
                return (rc, buffer.count - Int(stream.pointee.avail_out))
            }
            // Z_BUF_ERROR only says no progress was possible (nothing left to do).
            precondition(rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR, "deflate failed: \(rc)")
            output.append(contentsOf: piece[..<produced])
            if rc == Z_STREAM_END { break }
            // Output room left over means zlib has taken all input and given everything this mode asks for.
            if produced < piece.count, stream.pointee.avail_in == 0 { break }
        }
        return output
    }
}
