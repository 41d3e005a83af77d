import Foundation
import HealthCodec
import HealthModel

/// The continuation of a sample query whose limit left rows out: opaque bytes the server wrote
/// (Protocol/PROTOCOL.md, *Page tokens*), sent back as the next query's `after`.
///
/// Clients pass tokens on as they are; ``text`` is their printable form (base64url without padding), as hkq
/// prints it and the HTTP API's `after` parameter takes it.
public struct PageToken: Hashable, Sendable, CustomStringConvertible {
    /// The token's bytes, as on the wire.
    public let bytes: [UInt8]

    /// The format byte of the tokens this version writes.
    static let format: UInt8 = 1

    /// A token of `bytes` as received (checked only when a query carries it).
    public init(bytes: some Sequence<UInt8>) { self.bytes = Array(bytes) }

    /// The token naming `position`: format 1, sort, key, start, anchor.
    public init(_ position: SamplePosition) {
        var w = ByteWriter()
        w.write(Self.format)
        w.write(position.sort.rawValue)
        w.writeSignedVarint(position.key)
        w.writeSignedVarint(position.start)
        w.writeVarint(position.anchor)
        bytes = w.bytes
    }

    /// The position the token names; throws ``ErrorCode/invalidArgument`` for bytes that are no token.
    public func position() throws -> SamplePosition {
        var r = ByteReader(bytes)
        do {
            let format = try r.readByte()
            guard format == Self.format else {
                throw HealthError(.invalidArgument, "the page token has format \(format); this server reads format 1")
            }
            guard let sort = SampleSort(rawValue: try r.readByte()) else { throw Self.malformed }
            let position = SamplePosition(
                sort: sort, key: try r.readSignedVarint(), start: try r.readSignedVarint(), anchor: try r.readVarint())
            guard r.isAtEnd else { throw Self.malformed }
            return position
        } catch is CodecError {
            throw Self.malformed
        }
    }

    private static let malformed = HealthError(.invalidArgument, "the page token is malformed")

    /// The token as text: base64url (RFC 4648 §5) without padding.
    public var text: String {
        var text = Self.translated(Data(bytes).base64EncodedString(), from: "+/", to: "-_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// The token written as ``text`` (padding accepted); `nil` for text that is empty or not base64url.
    public init?(text: String) {
        guard !text.isEmpty, !text.contains("+"), !text.contains("/") else { return nil }
        var standard = Self.translated(text, from: "-_", to: "+/")
        while standard.utf8.count % 4 != 0 { standard += "=" }
        guard let data = Data(base64Encoded: standard) else { return nil }
        bytes = Array(data)
    }

    /// `text` with each character of `from` replaced by the one at the same place in `to`.
    private static func translated(_ text: String, from: String, to: String) -> String {
        let pairs = Dictionary(uniqueKeysWithValues: zip(from, to))
        return String(text.map { pairs[$0] ?? $0 })
    }

    public var description: String { text }
}
