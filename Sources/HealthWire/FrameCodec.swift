import HealthCodec
import HealthModel

/// Encodes frames: header plus payload, deflated when that makes the payload smaller.
public struct FrameEncoder: Sendable {
    /// Payloads shorter than this are sent uncompressed (deflate would not pay for its header).
    public var compressionThreshold: Int
    /// zlib level; 1 is the protocol's default (fast, and columns compress well at 1).
    public var compressionLevel: Int

    public init(compressionThreshold: Int = 512, compressionLevel: Int = 1) {
        self.compressionThreshold = compressionThreshold
        self.compressionLevel = compressionLevel
    }

    /// The frames of one request's replies, in order, each but the last flagged ``FrameFlags/more``.
    public func encode(replies: [Message], requestID: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        for (index, reply) in replies.enumerated() {
            let flags: FrameFlags = index < replies.count - 1 ? [.more] : []
            encode(reply.frame(requestID: requestID, flags: flags), into: &bytes)
        }
        return bytes
    }

    /// Appends the encoded frame to `out`.
    public func encode(_ frame: Frame, into out: inout [UInt8]) {
        var flags = frame.flags.subtracting(.compressed)
        var body = frame.payload
        if frame.payload.count >= compressionThreshold {
            let deflated = Zlib.deflate(frame.payload, level: compressionLevel)
            if deflated.count + FrameHeader.inflatedLengthSize < frame.payload.count {
                var compressed = ByteWriter(capacity: deflated.count + 4)
                compressed.writeLE(UInt32(frame.payload.count))
                compressed.write(bytes: deflated)
                body = compressed.bytes
                flags.insert(.compressed)
            }
        }
        FrameEncoder.writeHeader(
            kind: frame.kind, flags: flags, requestID: frame.requestID, length: body.count, into: &out)
        out.append(contentsOf: body)
    }

    /// The encoded frame as a new array.
    public func encode(_ frame: Frame) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(FrameHeader.size + frame.payload.count)
        encode(frame, into: &out)
        return out
    }

    static func writeHeader(
        kind: MessageKind, flags: FrameFlags, requestID: UInt32, length: Int, into out: inout [UInt8]
    ) {
        out.append(FrameHeader.magic.0)
        out.append(FrameHeader.magic.1)
        out.append(FrameHeader.version)
        out.append(kind.rawValue)
        out.append(flags.rawValue)
        out.append(contentsOf: [0, 0, 0])
        withUnsafeBytes(of: requestID.littleEndian) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(length).littleEndian) { out.append(contentsOf: $0) }
    }
}

/// An incremental frame decoder: feed it bytes as they arrive, take frames out as they complete.
///
/// `next()` returns `nil` while a frame is incomplete and throws ``WireError`` for malformed input; it never
/// reads past the bytes it was given and never allocates more than the limits allow. After an error the
/// stream cannot be resynchronised: close the connection.
public struct FrameDecoder: Sendable {
    public var limits: FrameLimits
    /// When set, compressed frames come out of ``next()`` still compressed (``FrameFlags/compressed`` set, the
    /// payload as on the wire) for ``inflate(_:limits:)`` to expand elsewhere: a server inflates on its workers,
    /// not on the event-loop thread that decodes frames for many connections.
    public var defersInflation = false
    private var buffer: [UInt8] = []
    private var readIndex = 0

    public init(limits: FrameLimits = .standard) {
        self.limits = limits
    }

    /// Bytes received but not yet returned as frames.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// The payload length the buffered frame header declares, once a whole header is buffered and ``next()``
    /// returned `nil` for want of its payload; `nil` before that.
    public var pendingPayloadLength: Int? {
        guard buffer.count - readIndex >= FrameHeader.size else { return nil }
        return Int(uint32(at: readIndex + 12))
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if readIndex > 0, readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, `nil` if more bytes are needed.
    public mutating func next() throws(WireError) -> Frame? {
        let available = buffer.count - readIndex
        // Check what the header says as soon as its bytes arrive, so garbage fails fast.
        if available >= 1, buffer[readIndex] != FrameHeader.magic.0 { throw badMagic() }
        if available >= 2, buffer[readIndex + 1] != FrameHeader.magic.1 { throw badMagic() }
        if available >= 3, buffer[readIndex + 2] != FrameHeader.version {
            throw WireError(
                .unsupportedVersion,
                "frame version \(buffer[readIndex + 2]) is not supported (this peer speaks \(FrameHeader.version))")
        }
        guard available >= FrameHeader.size else { return nil }
        let header = try parseHeader(at: readIndex)
        guard available >= FrameHeader.size + header.length else { return nil }
        let start = readIndex + FrameHeader.size
        let body = buffer[start..<start + header.length]
        readIndex = start + header.length
        let compressed = header.flags.contains(.compressed)
        if compressed, defersInflation {
            compactIfWorthIt()
            return Frame(kind: header.kind, flags: header.flags, requestID: header.requestID, payload: Array(body))
        }
        let payload = compressed ? try Self.inflate(body, kind: header.kind, limits: limits) : Array(body)
        compactIfWorthIt()
        return Frame(
            kind: header.kind, flags: header.flags.subtracting(.compressed), requestID: header.requestID,
            payload: payload)
    }

    /// A frame ``next()`` returned compressed (with ``defersInflation``), inflated under `limits`; any other frame
    /// as it is. Thread-safe.
    public static func inflate(_ frame: Frame, limits: FrameLimits) throws(WireError) -> Frame {
        guard frame.flags.contains(.compressed) else { return frame }
        let payload = try inflate(frame.payload[...], kind: frame.kind, limits: limits)
        return Frame(
            kind: frame.kind, flags: frame.flags.subtracting(.compressed), requestID: frame.requestID, payload: payload)
    }

    /// The inflated size a compressed payload declares (its first 4 bytes), `nil` when it is too short.
    public static func declaredInflatedLength(_ frame: Frame) -> Int? {
        guard frame.flags.contains(.compressed), frame.payload.count >= FrameHeader.inflatedLengthSize else {
            return nil
        }
        let p = frame.payload
        return Int(UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24)
    }

    private func badMagic() -> WireError {
        WireError(.malformedFrame, "bad magic: a frame starts with 48 4B (\"HK\")")
    }

    private func uint32(at offset: Int) -> UInt32 {
        UInt32(buffer[offset]) | UInt32(buffer[offset + 1]) << 8 | UInt32(buffer[offset + 2]) << 16
            | UInt32(buffer[offset + 3]) << 24
    }

    private func parseHeader(at base: Int) throws(WireError) -> (
        kind: MessageKind, flags: FrameFlags, requestID: UInt32, length: Int
    ) {
        guard let kind = MessageKind(rawValue: buffer[base + 3]) else {
            throw WireError(.unknownMessageKind, "unknown message kind 0x\(hex(buffer[base + 3]))")
        }
        let flags = FrameFlags(rawValue: buffer[base + 4])
        guard FrameFlags.known.isSuperset(of: flags) else {
            throw WireError(.malformedFrame, "unknown frame flag bits 0x\(hex(buffer[base + 4]))")
        }
        guard buffer[base + 5] == 0, buffer[base + 6] == 0, buffer[base + 7] == 0 else {
            throw WireError(.malformedFrame, "reserved header bytes 5–7 must be zero")
        }
        let length = Int(uint32(at: base + 12))
        guard length <= limits.maxFrameBytes else {
            throw WireError(
                .frameTooLarge, "frame payload of \(length) bytes exceeds the limit of \(limits.maxFrameBytes)")
        }
        return (kind, flags, uint32(at: base + 8), length)
    }

    private static func inflate(_ body: ArraySlice<UInt8>, kind: MessageKind, limits: FrameLimits) throws(WireError)
        -> [UInt8]
    {
        guard body.count >= FrameHeader.inflatedLengthSize else {
            throw WireError(.malformedFrame, "compressed \(kind) payload is shorter than its 4-byte inflated length")
        }
        let i = body.startIndex
        let declared = Int(
            UInt32(body[i]) | UInt32(body[i + 1]) << 8 | UInt32(body[i + 2]) << 16 | UInt32(body[i + 3]) << 24)
        guard declared <= limits.maxInflatedBytes else {
            throw WireError(
                .inflatedTooLarge,
                "compressed \(kind) payload declares \(declared) inflated bytes, over the limit of \(limits.maxInflatedBytes)"
            )
        }
        let inflated: [UInt8]
        do {
            inflated = try Zlib.inflate(Array(body.dropFirst(FrameHeader.inflatedLengthSize)), maxOutput: declared)
        } catch let error as CodecError where error.code == .inflatedTooLarge {
            throw WireError(
                .inflatedTooLarge, "compressed \(kind) payload inflates past its declared \(declared) bytes")
        } catch {
            throw WireError(.malformedFrame, "compressed \(kind) payload does not inflate: \(error)")
        }
        guard inflated.count == declared else {
            throw WireError(
                .malformedFrame,
                "compressed \(kind) payload inflates to \(inflated.count) bytes, not the declared \(declared)")
        }
        return inflated
    }

    private mutating func compactIfWorthIt() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            readIndex = 0
        } else if readIndex > 1 << 16, readIndex * 2 > buffer.count {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }
}
