import CLinux

#if canImport(Glibc)
    import Glibc
#endif

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
                hk_getrandom(buffer.baseAddress! + filled, UInt(count - filled))
            }
            if got < 0 {
                let error = errno
                if error == EINTR { continue }
                throw SystemError(errno: error, call: "getrandom")
            }
            filled += got
        }
        return out
    }
}
