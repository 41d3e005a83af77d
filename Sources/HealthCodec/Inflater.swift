import CZlib
import Foundation
import HealthModel

/// A streaming inflater fed chunk by chunk, with a cap on the total output.
///
/// Reads zlib, raw deflate or gzip streams. Not thread-safe: use one instance from one thread at a time. The
/// `z_stream` lives in heap memory this object owns, so it never moves after zlib initialised it.
public final class Inflater {
    public let format: ZlibFormat
    /// Most bytes the stream may inflate to; passing it throws ``ErrorCode/inflatedTooLarge``.
    public let maxOutput: Int
    /// Bytes produced so far by the current stream.
    public private(set) var totalOut = 0
    /// Whether the end of the stream was reached; later input is left unconsumed.
    public private(set) var isFinished = false
    private var failure: CodecError?
    private let stream: UnsafeMutablePointer<z_stream>

    /// Smallest amount the output grows by while room remains under the cap.
    private static let minimumGrowth = 32 * 1024

    /// Prepares to inflate one stream of `format` producing at most `maxOutput` bytes.
    public init(format: ZlibFormat = .zlib, maxOutput: Int) {
        precondition(maxOutput >= 0, "negative inflate cap")
        self.format = format
        self.maxOutput = maxOutput
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let rc = hk_inflateInit2(stream, format.windowBits)
        // Only memory exhaustion can fail here: the arguments are valid by construction.
        precondition(rc == Z_OK, "inflateInit2 failed: \(rc)")
    }

    deinit {
        CZlib.inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Starts over for a new stream with the same format and cap.
    public func reset() {
        CZlib.inflateReset(stream)
        totalOut = 0
        isFinished = false
        failure = nil
    }

    /// Inflates `chunk`, appending what it yields to `output`, and returns how many bytes of `chunk` were used:
    /// all of them unless the stream ended inside it (then ``isFinished`` is true and the rest is not part of it).
    ///
    /// Throws ``CodecError``: ``ErrorCode/inflatedTooLarge`` as soon as the stream's output passes ``maxOutput``
    /// (the output then holds at most ``maxOutput`` bytes of it), ``ErrorCode/malformedPayload`` with zlib's
    /// message for corrupt data. After an error the inflater keeps failing until ``reset()``.
    @discardableResult
    public func inflate(_ chunk: UnsafeRawBufferPointer, into output: inout [UInt8]) throws -> Int {
        if let failure { throw failure }
        if isFinished { return 0 }
        var used = 0
        while used < chunk.count, !isFinished {
            let piece = min(chunk.count - used, Int(UInt32.max >> 1))
            let start = chunk.baseAddress!.advanced(by: used).assumingMemoryBound(to: Bytef.self)
            do {
                used += try inflatePiece(start, count: piece, into: &output)
            } catch {
                failure = error
                throw error
            }
        }
        return used
    }

    /// ``inflate(_:into:)`` for any contiguous bytes.
    @discardableResult
    public func inflate(_ chunk: some ContiguousBytes, into output: inout [UInt8]) throws -> Int {
        try chunk.withUnsafeBytes { try inflate($0, into: &output) }
    }

    /// Throws unless the stream reached its end (call once the input is exhausted).
    public func finish() throws {
        if let failure { throw failure }
        guard isFinished else {
            throw CodecError(.malformedPayload, "zlib: truncated stream (ended after \(totalOut) inflated bytes)")
        }
    }

    /// Feeds `count` bytes (fewer than 2^31) and returns how many zlib consumed.
    private func inflatePiece(
        _ input: UnsafePointer<Bytef>, count: Int, into output: inout [UInt8]
    ) throws(CodecError) -> Int {
        stream.pointee.next_in = input
        stream.pointee.avail_in = uInt(count)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
        while true {
            let room = maxOutput - totalOut
            let rc: Int32
            let outputFull: Bool
            if room == 0 {
                // At the cap: any further byte means the stream is too large. Probe with a one-byte buffer.
                var probe: UInt8 = 0
                rc = withUnsafeMutablePointer(to: &probe) { pointer in
                    stream.pointee.next_out = pointer
                    stream.pointee.avail_out = 1
                    return CZlib.inflate(stream, Z_NO_FLUSH)
                }
                if stream.pointee.avail_out == 0 {
                    throw CodecError(.inflatedTooLarge, "inflated payload exceeds the limit of \(maxOutput) bytes")
                }
                outputFull = false
            } else {
                let growth = min(room, max(Inflater.minimumGrowth, output.count), Int(UInt32.max >> 1))
                let base = output.count
                output.reserveCapacity(base + growth)
                output.append(contentsOf: repeatElement(0, count: growth))
                rc = output.withUnsafeMutableBufferPointer { buffer in
                    stream.pointee.next_out = buffer.baseAddress! + base
                    stream.pointee.avail_out = uInt(growth)
                    return CZlib.inflate(stream, Z_NO_FLUSH)
                }
                let unused = Int(stream.pointee.avail_out)
                output.removeLast(unused)
                totalOut += growth - unused
                outputFull = unused == 0
            }
            let consumed = count - Int(stream.pointee.avail_in)
            switch rc {
            case Z_STREAM_END:
                isFinished = true
                return consumed
            case Z_OK, Z_BUF_ERROR:
                // Z_BUF_ERROR only means no progress was possible: more input is needed.
                if stream.pointee.avail_in == 0, !outputFull { return consumed }
                if rc == Z_BUF_ERROR, !outputFull { return consumed }
            default:
                throw CodecError(.malformedPayload, Zlib.message(stream, code: rc))
            }
        }
    }
}
