// A non-blocking TCP listening socket.
import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A bound, listening, non-blocking TCP socket with SO_REUSEADDR. Used by `TCPServer`; a server may bind it
/// first (so a busy port fails before anything else happens) and start accepting later: connections that arrive
/// meanwhile wait in the backlog. Thread-safe: `accept` may run on any one thread at a time; `close` is idempotent.
public final class ListeningSocket: Sendable {
    /// The descriptor.
    let fd: Int32
    /// The bound address (with the real port when port 0 was asked for).
    public let address: SocketAddress
    private let closed = Atomic<Bool>(false)

    private init(fd: Int32, address: SocketAddress) {
        self.fd = fd
        self.address = address
    }

    deinit { close() }

    /// Binds and listens on the first address of `host` that accepts a bind; port 0 picks a free port.
    public static func bind(host: String, port: Int, backlog: Int32 = 1024) throws(SystemError) -> ListeningSocket {
        let candidates = try SocketAddress.resolve(host: host, port: port)
        var lastError = SystemError(code: EADDRNOTAVAIL, call: "bind(\(host))", message: "no address to bind")
        for candidate in candidates {
            let fd = try Sys.socket(domain: candidate.family)
            do throws(SystemError) {
                try Sys.setSocketOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
                try Sys.bind(fd, candidate)
                try Sys.listen(fd, backlog: backlog)
                return ListeningSocket(fd: fd, address: try Sys.socketAddress(fd, peer: false))
            } catch {
                try? Sys.close(fd)
                lastError = error
            }
        }
        throw lastError
    }

    /// Accepts one pending connection (non-blocking, close-on-exec, TCP_NODELAY set).
    func accept() throws(SystemError) -> IOResult<(fd: Int32, address: SocketAddress)> {
        switch try Sys.accept(fd) {
        case .wouldBlock:
            return .wouldBlock
        case .processed(let (client, address)):
            try? Sys.setSocketOption(client, level: HK_IPPROTO_TCP, name: HK_TCP_NODELAY, value: 1)
            return .processed((client, address))
        }
    }

    /// Closes the socket; later calls do nothing.
    public func close() {
        if !closed.exchange(true, ordering: .acquiringAndReleasing) { try? Sys.close(fd) }
    }
}
