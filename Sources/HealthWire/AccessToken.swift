import HealthCodec

/// A client's secret: `hkd1_<writer id, 8 hex digits>_<256 random bits, 64 hex digits>`.
///
/// The id part travels in ``Hello`` so the server can find the identity's salt and verifier without the
/// secret; the secret never leaves the client (the handshake proves knowledge of it, Protocol/PROTOCOL.md
/// "Authentication"). Values, thread-safe.
public struct AccessToken: Hashable, Sendable {
    /// The identity's numeric id (its writer id); never 0 (0 in a hello means "no token").
    public var identityID: UInt32
    /// 32 random bytes.
    public var secret: [UInt8]

    /// What every token's text starts with.
    public static let prefix = "hkd1_"
    /// Bytes of random secret in a token.
    public static let secretBytes = 32

    /// A token from its parts; `secret` must come from a CSPRNG (the server uses getrandom).
    public init(identityID: UInt32, secret: [UInt8]) {
        self.identityID = identityID
        self.secret = secret
    }

    /// The token as the user stores it (`--token`, `HKQ_TOKEN`, `admin.token`).
    public var text: String {
        Self.prefix + Hex.encode(withUnsafeBytes(of: identityID.bigEndian) { Array($0) }) + "_" + Hex.encode(secret)
    }

    /// Parses a token's text; `nil` for anything not shaped like a token (an id of 0 included).
    public init?(_ text: String) {
        guard text.utf8.count == Self.prefix.utf8.count + 8 + 1 + 2 * Self.secretBytes, text.hasPrefix(Self.prefix)
        else { return nil }
        let parts = text.dropFirst(Self.prefix.count).split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2, let idBytes = Hex.decode(parts[0]), idBytes.count == 4,
            let secret = Hex.decode(parts[1]), secret.count == Self.secretBytes
        else { return nil }
        identityID = idBytes.reduce(0) { $0 << 8 | UInt32($1) }
        guard identityID != 0 else { return nil }
        self.secret = secret
    }

    /// SHA-256 of salt then secret: the *salted token* the handshake keys derive from
    /// (``TokenVerifier``); identity files of format 1 kept it as `tokenHash`.
    public static func saltedToken(secret: [UInt8], salt: [UInt8]) -> [UInt8] { SHA256.hash(salt + secret) }
}

/// Lower-case hexadecimal text of bytes.
public enum Hex {
    /// `bytes` as lower-case hex digits, two per byte.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of lower-case hex text; `nil` for an odd length or any other character.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        var i = 0
        while i < utf8.count {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
            i += 2
        }
        return bytes
    }
}
