// A blocking, timeout-aware TCP client socket (the client library and tests use it; servers use Connection).
import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A connected TCP socket whose calls block until done or until their timeout expires (ETIMEDOUT).
///
/// Threading: one thread may read while another writes. `shutdown()` wakes a blocked reader (it then sees end of
/// stream); call `close()` only once no other thread is inside a call.
public final class ClientSocket: Sendable {
    private let fd: Int32
    private let closed = Atomic<Bool>(false)
    /// The server's address.
    public let remoteAddress: SocketAddress
    /// The local address of this end.
    public let localAddress: SocketAddress

    private init(fd: Int32, remote: SocketAddress) throws(SystemError) {
        self.fd = fd
        self.remoteAddress = remote
        self.localAddress = try Sys.socketAddress(fd, peer: false)
    }

    deinit { close() }

    /// Connects to `host:port`, trying each resolved address in turn, within `timeout` overall (nil: no limit).
    /// Sets TCP_NODELAY. Throws the last address's error (ETIMEDOUT when the time ran out).
    public static func connect(host: String, port: Int, timeout: Duration? = .seconds(10)) throws(SystemError)
        -> ClientSocket
    {
        let deadline = Deadline.after(timeout)
        let candidates = try SocketAddress.resolve(host: host, port: port)
        var lastError = SystemError(code: EADDRNOTAVAIL, call: "connect(\(host))", message: "no address")
        for candidate in candidates {
            let fd = try Sys.socket(domain: candidate.family)
            do throws(SystemError) {
                if try !Sys.connect(fd, candidate) {
                    try waitUntilReady(fd, events: HK_POLLOUT, deadline: deadline, call: "connect(\(candidate))")
                    let pending = try Sys.socketError(fd)
                    if pending != 0 { throw SystemError(errno: pending, call: "connect(\(candidate))") }
                }
                try Sys.setSocketOption(fd, level: HK_IPPROTO_TCP, name: HK_TCP_NODELAY, value: 1)
                return try ClientSocket(fd: fd, remote: candidate)
            } catch {
                try? Sys.close(fd)
                lastError = error
                if error.isTimeout { break }
            }
        }
        throw lastError
    }

    /// Sends every byte of `bytes`, waiting for buffer space as needed, within `timeout` (nil: no limit).
    public func write(_ bytes: UnsafeRawBufferPointer, timeout: Duration? = nil) throws(SystemError) {
        let deadline = Deadline.after(timeout)
        var offset = 0
        while offset < bytes.count {
            switch try Sys.send(fd, UnsafeRawBufferPointer(rebasing: bytes[offset...])) {
            case .processed(let sent): offset += sent
            case .wouldBlock: try Self.waitUntilReady(fd, events: HK_POLLOUT, deadline: deadline, call: "send")
            }
        }
    }

    /// Sends every byte of `bytes` (see `write(_:timeout:)` for a raw buffer).
    public func write(_ bytes: [UInt8], timeout: Duration? = nil) throws(SystemError) {
        try bytes.withUnsafeBytes { raw in Result { () throws(SystemError) in try write(raw, timeout: timeout) } }.get()
    }

    /// Reads what is available (at least one byte) into `buffer`, waiting up to `timeout` (nil: no limit).
    /// Returns 0 at end of stream (the peer closed, or `shutdown()` was called).
    public func read(into buffer: UnsafeMutableRawBufferPointer, timeout: Duration? = nil) throws(SystemError) -> Int {
        let deadline = Deadline.after(timeout)
        while true {
            switch try Sys.receive(fd, buffer) {
            case .processed(let count): return count
            case .wouldBlock: try Self.waitUntilReady(fd, events: HK_POLLIN, deadline: deadline, call: "recv")
            }
        }
    }

    /// Reads up to `maxBytes` (at least one), waiting up to `timeout`; an empty result means end of stream.
    /// The bytes land in the array's uninitialised capacity: no zeroing of `maxBytes` at every read, however few
    /// bytes arrive.
    public func read(maxBytes: Int, timeout: Duration? = nil) throws(SystemError) -> [UInt8] {
        var failure: SystemError?
        let result = [UInt8](unsafeUninitializedCapacity: max(1, maxBytes)) { buffer, initialized in
            do throws(SystemError) {
                initialized = try read(into: UnsafeMutableRawBufferPointer(buffer), timeout: timeout)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
        return result
    }

    /// Waits until data (or end of stream) can be read; false when `timeout` expired first.
    public func waitForReadable(timeout: Duration?) throws(SystemError) -> Bool {
        do throws(SystemError) {
            try Self.waitUntilReady(fd, events: HK_POLLIN, deadline: .after(timeout), call: "poll")
            return true
        } catch  where error.isTimeout {
            return false
        }
    }

    /// Closes the sending side (the peer reads end of stream); reading stays possible.
    public func shutdownWrite() throws(SystemError) { try Sys.shutdown(fd, how: Sys.shutWrite) }

    /// Shuts down both directions, waking any thread blocked in `read`; the descriptor stays open until `close()`.
    public func shutdown() { try? Sys.shutdown(fd, how: Sys.shutBoth) }

    /// Closes the descriptor; idempotent. No other thread may be inside a call on this socket.
    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { try? Sys.close(fd) }
    }

    /// Closes with a reset (SO_LINGER 0): the peer sees ECONNRESET, as when a client crashes or a network drops.
    public func resetAndClose() {
        try? Sys.setAbortiveClose(fd)
        close()
    }

    /// Polls `fd` for `events` until ready or `deadline`; throws ETIMEDOUT on expiry.
    private static func waitUntilReady(_ fd: Int32, events: Int16, deadline: Deadline, call: String)
        throws(SystemError)
    {
        while true {
            let timeout = deadline.pollTimeoutMilliseconds
            if timeout == 0 && deadline.hasExpired { throw SystemError(errno: ETIMEDOUT, call: call) }
            if try Sys.pollOne(fd, events: events, timeoutMilliseconds: timeout) != 0 { return }
        }
    }
}
