// A non-blocking TCP listening socket.
import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A bound, non-blocking TCP socket with SO_REUSEADDR, listening or about to. Used by `TCPServer`; a server may
/// ``reserve(host:port:)`` its port first (so a busy port fails before anything else happens) and listen only
/// once it can answer: until then the kernel refuses connections to the port, so a port check does not report a
/// server that cannot serve yet. Thread-safe: `accept` may run on any one thread at a time; `listen` and `close`
/// are idempotent.
public final class ListeningSocket: Sendable {
    /// The descriptor.
    let fd: Int32
    /// The bound address (with the real port when port 0 was asked for).
    public let address: SocketAddress
    private let closed = Atomic<Bool>(false)
    private let listening = Atomic<Bool>(false)

    private init(fd: Int32, address: SocketAddress) {
        self.fd = fd
        self.address = address
    }

    deinit { close() }

    /// Binds and listens on the first address of `host` that accepts a bind; port 0 picks a free port.
    public static func bind(host: String, port: Int, backlog: Int32 = 1024) throws(SystemError) -> ListeningSocket {
        let socket = try reserve(host: host, port: port)
        try socket.listen(backlog: backlog)
        return socket
    }

    /// Binds the first address of `host` that accepts a bind, without listening: connections to the port are
    /// refused until ``listen(backlog:)``. Port 0 picks a free port. A port another socket listens on fails here;
    /// one that is only reserved elsewhere does not (whichever listens first has it, the other's `listen` fails).
    public static func reserve(host: String, port: Int) throws(SystemError) -> ListeningSocket {
        let candidates = try SocketAddress.resolve(host: host, port: port)
        var lastError = SystemError(code: EADDRNOTAVAIL, call: "bind(\(host))", message: "no address to bind")
        for candidate in candidates {
            let fd = try Sys.socket(domain: candidate.family)
            do throws(SystemError) {
                try Sys.setSocketOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
                try Sys.bind(fd, candidate)
                return ListeningSocket(fd: fd, address: try Sys.socketAddress(fd, peer: false))
            } catch {
                try? Sys.close(fd)
                lastError = error
            }
        }
        throw lastError
    }

    /// Starts listening, so that the kernel completes connections to the port and queues up to `backlog` of
    /// them for `accept`. Does nothing when already listening.
    public func listen(backlog: Int32 = 1024) throws(SystemError) {
        guard !listening.load(ordering: .acquiring) else { return }
        try Sys.listen(fd, backlog: backlog)
        listening.store(true, ordering: .releasing)
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
