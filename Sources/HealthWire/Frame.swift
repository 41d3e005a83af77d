import HealthCodec
import HealthModel

/// Frame flag bits (header byte 4). Unknown bits are a malformed frame.
public struct FrameFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The payload is a 4-byte inflated length followed by a zlib stream.
    public static let compressed = FrameFlags(rawValue: 1 << 0)
    /// More frames answering the same request follow (a streamed result); the last one clears this bit.
    public static let more = FrameFlags(rawValue: 1 << 1)

    static let known: FrameFlags = [.compressed, .more]
}

/// A decoded frame: header fields and the payload, already inflated.
public struct Frame: Hashable, Sendable {
    public var kind: MessageKind
    /// `.more` only; compression is a property of the bytes on the wire, not of the frame.
    public var flags: FrameFlags
    /// Chosen by the client, echoed in replies; for ``MessageKind/update`` the subscription id.
    public var requestID: UInt32
    public var payload: [UInt8]

    public init(kind: MessageKind, flags: FrameFlags = [], requestID: UInt32, payload: [UInt8]) {
        self.kind = kind
        self.flags = flags
        self.requestID = requestID
        self.payload = payload
    }
}

/// Header layout constants (Protocol/PROTOCOL.md, "Frame header").
public enum FrameHeader {
    /// "HK".
    public static let magic: (UInt8, UInt8) = (0x48, 0x4B)
    public static let version: UInt8 = 1
    public static let size = 16
    /// Bytes before the zlib stream in a compressed payload: the inflated length, u32 LE.
    public static let inflatedLengthSize = 4
}

/// The sizes a peer accepts; the server announces its own in ``Welcome``.
public struct FrameLimits: Hashable, Sendable {
    /// Largest payload on the wire (after compression), in bytes.
    public var maxFrameBytes: Int
    /// Largest payload after inflating, in bytes.
    public var maxInflatedBytes: Int

    public init(maxFrameBytes: Int, maxInflatedBytes: Int) {
        self.maxFrameBytes = maxFrameBytes
        self.maxInflatedBytes = maxInflatedBytes
    }

    /// The defaults: 16 MiB on the wire, 64 MiB inflated.
    public static let standard = FrameLimits(maxFrameBytes: 16 << 20, maxInflatedBytes: 64 << 20)
    /// What a server accepts before the handshake: a hello is small.
    public static let handshake = FrameLimits(maxFrameBytes: 64 << 10, maxInflatedBytes: 64 << 10)
}

/// Why bytes are not a valid frame. The connection cannot continue after one of these.
public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
    public var healthError: HealthError { HealthError(code, message) }
}
