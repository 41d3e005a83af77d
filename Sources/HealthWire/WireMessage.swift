import Foundation
import HealthCodec
import HealthModel

/// Limits applied while decoding message payloads; every count is checked before anything is allocated.
public struct MessageLimits: FieldLimits, Hashable {
    /// Limits for columnar sample batches (insert, results, changes).
    public var batch: BatchLimits
    /// Largest number of entries in any other list (UUIDs, types, sources, buckets, identities).
    public var maxListEntries: Int
    /// Longest string, in UTF-8 bytes.
    public var maxStringBytes: Int

    public init(batch: BatchLimits = .default, maxListEntries: Int = 1_000_000, maxStringBytes: Int = 65_536) {
        self.batch = batch
        self.maxListEntries = maxListEntries
        self.maxStringBytes = maxStringBytes
    }

    public static let standard = MessageLimits()
}

/// A message with a fixed kind and a payload encoding (Protocol/PROTOCOL.md gives each byte layout).
public protocol WireMessage: Hashable, Sendable {
    static var kind: MessageKind { get }
    /// Appends the payload bytes.
    func encode(into writer: inout ByteWriter)
    /// Decodes a payload; throws ``CodecError`` for malformed bytes.
    init(from reader: inout ByteReader, limits: MessageLimits) throws
    /// For a ``Request``, the message that answers it; `nil` for every other message. Requirements with defaults
    /// rather than dynamic casts: the registry asks every message type once, and a cast to a protocol the type
    /// does not conform to scans every conformance record of the program (milliseconds in a static hkq).
    static var replyType: (any WireMessage.Type)? { get }
    /// Whether the reply may span several frames (a ``StreamedRequest``).
    static var streamsReplies: Bool { get }
}

extension WireMessage {
    public static var replyType: (any WireMessage.Type)? { nil }
    public static var streamsReplies: Bool { false }
}

extension WireMessage {
    /// The payload bytes.
    public func encodedPayload() -> [UInt8] {
        var writer = ByteWriter()
        encode(into: &writer)
        return writer.bytes
    }

    /// Decodes a whole payload, rejecting trailing bytes.
    public init(payload: [UInt8], limits: MessageLimits = .standard) throws {
        var reader = ByteReader(payload)
        try self.init(from: &reader, limits: limits)
        try reader.expectEnd("the payload")
    }
}
