import Foundation

/// A file this process rewrites for every input, for decoders that read only from a path (hkq's sample file
/// reader). Lives in /dev/shm when there is one, so no disk I/O happens.
final class ScratchFile: Sendable {
    /// The file's path.
    let path: String

    /// A scratch file with extension `ext`, private to this process.
    init(ext: String) {
        let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        path = "\(directory)/hkfuzz-\(getpid()).\(ext)"
    }

    deinit { unlink(path) }

    /// Replaces the contents with `bytes`.
    func write(_ bytes: [UInt8]) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(fd >= 0, "cannot create \(path)")
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Foundation.write(fd, raw.baseAddress! + done, raw.count - done)
                precondition(n > 0, "cannot write \(path)")
                done += n
            }
        }
        close(fd)
    }
}
