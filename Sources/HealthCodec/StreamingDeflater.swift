import CZlib

/// A deflate stream fed in pieces: each ``compress(_:flush:)`` returns the output zlib has ready, ``finish()``
/// the rest and the trailer; memory stays zlib's window and state whatever the total length (a streamed HTTP
/// body compressed with gzip).
///
/// Not thread-safe: one producer uses it. The `z_stream` lives in heap memory this object owns, so it never moves
/// after zlib initialised it.
public final class StreamingDeflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private var finished = false

    /// A stream at `level` (0 none, 1 fastest … 9 smallest) producing `format`.
    public init(level: Int = 1, format: ZlibFormat = .gzip) {
        precondition((0...9).contains(level), "deflate level \(level) is outside 0...9")
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

    /// Compresses `input`; returns the compressed bytes ready so far (often none: zlib gathers a block). With
    /// `flush`, everything given so far comes out (a sync flush: the reader can decompress it now).
    public func compress(_ input: UnsafeRawBufferPointer, flush: Bool = false) -> [UInt8] {
        precondition(!finished, "StreamingDeflater.compress after finish")
        return run(input, mode: flush ? Z_SYNC_FLUSH : Z_NO_FLUSH)
    }

    /// Ends the stream: the remaining compressed bytes and the format's trailer.
    public func finish() -> [UInt8] {
        precondition(!finished, "StreamingDeflater.finish twice")
        defer { finished = true }
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
