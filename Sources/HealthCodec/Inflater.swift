import CZlib
import Foundation
import HealthModel

/// A streaming inflater fed chunk by chunk, with a cap on the total output.
///
/// Reads zlib, raw deflate or gzip streams. Not thread-safe: use one instance from one thread at a time. The
/// `z_stream` lives in heap memory this object owns, so it never moves after zlib initialised it.
public final class Inflater {
    /// The container the input is expected in.
    public let format: ZlibFormat
    /// Most bytes the stream may inflate to; passing it throws ``ErrorCode/inflatedTooLarge``.
    public let maxOutput: Int
    /// Bytes produced so far by the current stream.
    public private(set) var totalOut = 0
    /// Whether the end of the stream was reached; later input is left unconsumed.
    public private(set) var isFinished = false
    private var failure: CodecError?
    private let stream: UnsafeMutablePointer<z_stream>
    /// Where zlib writes before the bytes are appended to the caller's output.
    private let scratch: UnsafeMutablePointer<UInt8>

    /// Size of ``scratch``: output is produced 64 KiB at a time.
    private static let scratchSize = 64 * 1024

    /// Prepares to inflate one stream of `format` producing at most `maxOutput` bytes.
    public init(format: ZlibFormat = .zlib, maxOutput: Int) {
        precondition(maxOutput >= 0, "negative inflate cap")
        self.format = format
        self.maxOutput = maxOutput
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        scratch = .allocate(capacity: Inflater.scratchSize)
        let rc = hk_inflateInit2(stream, format.windowBits)
        // Only memory exhaustion can fail here: the arguments are valid by construction.
        precondition(rc == Z_OK, "inflateInit2 failed: \(rc)")
    }

    deinit {
        CZlib.inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        scratch.deallocate()
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
            // Inflate into the scratch buffer, at most the room left under the cap; at the cap, offer one byte:
            // if zlib fills it the stream is too large.
            let room = maxOutput - totalOut
            let offered = room == 0 ? 1 : min(room, Inflater.scratchSize)
            stream.pointee.next_out = scratch
            stream.pointee.avail_out = uInt(offered)
            let rc = CZlib.inflate(stream, Z_NO_FLUSH)
            let produced = offered - Int(stream.pointee.avail_out)
            if room == 0, produced > 0 {
                throw CodecError(.inflatedTooLarge, "inflated payload exceeds the limit of \(maxOutput) bytes")
            }
            if produced > 0 { append(produced, to: &output, room: room) }
            let outputFull = produced == offered
            switch rc {
            case Z_STREAM_END:
                isFinished = true
                return count - Int(stream.pointee.avail_in)
            case Z_OK, Z_BUF_ERROR:
                // Z_BUF_ERROR only means no progress was possible: more input is needed.
                if !outputFull, stream.pointee.avail_in == 0 || rc == Z_BUF_ERROR {
                    return count - Int(stream.pointee.avail_in)
                }
            default:
                throw CodecError(.malformedPayload, Zlib.message(stream, code: rc))
            }
        }
    }

    /// Appends `produced` scratch bytes, growing `output` geometrically but never past what the cap allows.
    private func append(_ produced: Int, to output: inout [UInt8], room: Int) {
        let needed = output.count + produced
        if output.capacity < needed {
            let ceiling = output.count + room
            output.reserveCapacity(min(max(needed, 2 * output.capacity, Inflater.scratchSize), ceiling))
        }
        output.append(contentsOf: UnsafeBufferPointer(start: scratch, count: produced))
        totalOut += produced
    }
}
