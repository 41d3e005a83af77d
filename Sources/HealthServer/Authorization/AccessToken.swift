/// A client's secret: `hkd1_<writer id, 8 hex digits>_<256 random bits, 64 hex digits>`.
///
/// The id lets the server find the identity without trying every hash; only the secret part is hashed (salted
/// SHA-256) and stored. Values, thread-safe.
public struct AccessToken: Hashable, Sendable {
    /// The identity's numeric id (its writer id).
    public var identityID: UInt32
    /// 32 random bytes.
    public var secret: [UInt8]

    static let prefix = "hkd1_"

    /// A fresh token for identity `id`, its secret from the system's CSPRNG (getrandom on Linux).
    public static func generate(for id: UInt32) -> AccessToken {
        var generator = SystemRandomNumberGenerator()
        return AccessToken(identityID: id, secret: randomBytes(32, using: &generator))
    }

    /// `count` bytes from `generator`.
    static func randomBytes(_ count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The token as the client sends it.
    public var text: String {
        Self.prefix + Hex.encode(withUnsafeBytes(of: identityID.bigEndian) { Array($0) }) + "_" + Hex.encode(secret)
    }

    /// Parses a token's text; `nil` for anything not shaped like a token.
    public init?(_ text: String) {
        guard text.utf8.count == Self.prefix.utf8.count + 8 + 1 + 64, text.hasPrefix(Self.prefix) else { return nil }
        let parts = text.dropFirst(Self.prefix.count).split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2, let idBytes = Hex.decode(parts[0]), idBytes.count == 4,
            let secret = Hex.decode(parts[1]), secret.count == 32
        else { return nil }
        identityID = idBytes.reduce(0) { $0 << 8 | UInt32($1) }
        self.secret = secret
    }

    init(identityID: UInt32, secret: [UInt8]) {
        self.identityID = identityID
        self.secret = secret
    }

    /// SHA-256 of salt then secret: what the identity file keeps.
    static func hash(secret: [UInt8], salt: [UInt8]) -> [UInt8] { SHA256.hash(salt + secret) }

    /// Compares in time independent of where the bytes differ.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}

/// Lower-case hexadecimal text of bytes.
enum Hex {
    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: some StringProtocol) -> [UInt8]? {
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
