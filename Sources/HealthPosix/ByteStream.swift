/// A connected, blocking byte stream a client talks through: a ``ClientSocket`` itself, or a layer over one
/// (TLS). One thread may read while others write.
public protocol ByteStream: Sendable {
    /// Reads up to `maxBytes` (at least one), waiting up to `timeout` (nil: no limit; ETIMEDOUT on expiry as a
    /// ``SystemError``); an empty result means end of stream.
    func read(maxBytes: Int, timeout: Duration?) throws -> [UInt8]
    /// Sends every byte of `bytes` within `timeout` (nil: no limit).
    func write(_ bytes: [UInt8], timeout: Duration?) throws
    /// Shuts down both directions, waking a blocked reader (it then sees end of stream).
    func shutdown()
    /// Releases the stream; idempotent. No other thread may be inside a call.
    func close()
}

extension ClientSocket: ByteStream {}
