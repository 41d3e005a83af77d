/// HMAC-SHA256 (RFC 2104 over ``SHA256``), for the handshake's challenge-response (Protocol/PROTOCOL.md,
/// "Authentication").
///
/// Pure and thread-safe; checked against the RFC 4231 test vectors in the codec tests.
public enum HMACSHA256 {
    /// SHA-256's block size in bytes: keys longer than this are hashed first, shorter ones zero-padded.
    public static let blockSize = 64

    /// The 32-byte authentication code of `message` under `key`.
    public static func authenticationCode(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        var block = key.count > blockSize ? SHA256.hash(key) : Array(key)
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = SHA256.hash(block.map { $0 ^ 0x36 } + Array(message))
        return SHA256.hash(block.map { $0 ^ 0x5c } + inner)
    }

    /// Compares two byte strings in time independent of where they differ (lengths are not secret).
    public static func constantTimeEqual(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
