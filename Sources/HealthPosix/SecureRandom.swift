/// Bytes from the kernel's CSPRNG (`getrandom(2)`), for tokens, salts and handshake nonces.
///
/// Thread-safe. Reads are retried on EINTR and on short reads; any other failure throws a ``SystemError``.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(_ count: Int) throws(SystemError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = out.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemError) in
                    try Sys.getRandom(UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                }
            }
            filled += try got.get()
        }
        return out
    }
}
