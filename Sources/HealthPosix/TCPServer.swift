// Accepts TCP connections on one loop and spreads them over a group, within a connection limit.
import CLinux
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How a `TCPServer` listens and what it allows.
public struct TCPServerConfiguration: Sendable {
    /// The address to listen on: an IPv4/IPv6 literal, `localhost`, or empty/`*` for every address.
    public var host: String
    /// The port; 0 picks a free one (read it back from `TCPServer.port`).
    public var port: Int
    /// The listen backlog.
    public var backlog: Int32
    /// Connections beyond this many open ones are refused.
    public var maxConnections: Int
    /// Bytes sent (best effort) to a refused connection before it is closed, e.g. an encoded error frame.
    public var refusalMessage: [UInt8]
    /// Backpressure thresholds of every accepted connection.
    public var waterMarks: WaterMarks

    /// A configuration for `host:port`; the other settings take their defaults.
    public init(
        host: String = "127.0.0.1", port: Int = 0, backlog: Int32 = 1024, maxConnections: Int = 10_000,
        refusalMessage: [UInt8] = [], waterMarks: WaterMarks = .default
    ) {
        self.host = host
        self.port = port
        self.backlog = backlog
        self.maxConnections = maxConnections
        self.refusalMessage = refusalMessage
        self.waterMarks = waterMarks
    }
}

/// A TCP server: accepts on one loop of `group`, hands each connection to `group.next()` with a handler made
/// by the factory (on the connection's loop), and refuses connections over `maxConnections`.
///
/// Threading: all members are thread-safe. The handler factory runs on the connection's loop thread.
public final class TCPServer: Sendable {
    /// The address actually bound (its port is the real one when port 0 was asked for).
    public let localAddress: SocketAddress
    private let listener: ListeningSocket
    private let acceptLoop: EventLoop
    private let group: EventLoopGroup
    private let configuration: TCPServerConfiguration
    private let makeHandler: @Sendable (Connection) -> any ConnectionHandler
    private let openConnections = ConditionLock<[ObjectIdentifier: Connection]>([:])
    private let refused = Atomic<Int>(0)
    private let accepted = Atomic<Int>(0)
    private let listenerState = ConditionLock(ListenerState())

    private struct ListenerState {
        var registration: RegistrationID?
    }

    /// Binds, listens and starts accepting. Blocks until the listener is registered on its loop, so do not
    /// call it from a loop thread of `group` other than the accepting one.
    public static func start(
        group: EventLoopGroup, configuration: TCPServerConfiguration,
        handlerFactory: @escaping @Sendable (Connection) -> any ConnectionHandler
    ) throws -> TCPServer {
        let listener = try ListeningSocket.bind(
            host: configuration.host, port: configuration.port, backlog: configuration.backlog)
        return try start(group: group, listener: listener, configuration: configuration, handlerFactory: handlerFactory)
    }

    /// Starts accepting on a socket bound earlier (its address wins over the configuration's host and port),
    /// listening on it first if it was only reserved (``ListeningSocket/reserve(host:port:)``).
    public static func start(
        group: EventLoopGroup, listener: ListeningSocket, configuration: TCPServerConfiguration,
        handlerFactory: @escaping @Sendable (Connection) -> any ConnectionHandler
    ) throws -> TCPServer {
        try listener.listen(backlog: configuration.backlog)
        let server = TCPServer(
            listener: listener, group: group, configuration: configuration, handlerFactory: handlerFactory)
        try server.acceptLoop.submitAndWait { try server.registerListener() }
        return server
    }

    private init(
        listener: ListeningSocket, group: EventLoopGroup, configuration: TCPServerConfiguration,
        handlerFactory: @escaping @Sendable (Connection) -> any ConnectionHandler
    ) {
        self.listener = listener
        self.localAddress = listener.address
        self.group = group
        self.acceptLoop = group.next()
        self.configuration = configuration
        self.makeHandler = handlerFactory
    }

    /// The bound port.
    public var port: Int { localAddress.port }

    /// Connections currently open.
    public var connectionCount: Int { openConnections.withLock { $0.count } }

    /// Connections refused so far because of `maxConnections`.
    public var refusedCount: Int { refused.load(ordering: .relaxed) }

    /// Connections accepted so far (refused ones excluded).
    public var acceptedCount: Int { accepted.load(ordering: .relaxed) }

    /// Stops accepting and closes every open connection (each handler hears `connectionDidClose`). Returns at
    /// once; the closes run on the loops. Idempotent.
    public func stop() {
        acceptLoop.execute { self.stopListening() }
        let connections = openConnections.withLock { Array($0.values) }
        for connection in connections { connection.close() }
    }

    // MARK: Accepting (accept loop only)

    private func registerListener() throws(SystemError) {
        let registration = try acceptLoop.register(
            fd: listener.fd, interest: .readable, onEvent: { _ in self.acceptPending() },
            onLoopShutdown: { self.stopListening() })
        listenerState.withLock { $0.registration = registration }
    }

    private func stopListening() {
        let registration = listenerState.withLock { state -> RegistrationID? in
            defer { state.registration = nil }
            return state.registration
        }
        if let registration { try? acceptLoop.deregister(registration) }
        listener.close()
    }

    /// Accepts up to 64 pending connections.
    private func acceptPending() {
        for _ in 0..<64 {
            let result: IOResult<(fd: Int32, address: SocketAddress)>
            do {
                result = try listener.accept()
            } catch {
                handleAcceptError(error)
                return
            }
            guard case .processed(let (fd, address)) = result else { return }
            if connectionCount >= configuration.maxConnections {
                refuse(fd)
            } else {
                adopt(fd, address: address)
            }
        }
    }

    private func adopt(_ fd: Int32, address: SocketAddress) {
        accepted.add(1, ordering: .relaxed)
        let loop = group.next()
        let connection = Connection(fd: fd, loop: loop, remoteAddress: address, waterMarks: configuration.waterMarks)
        let key = ObjectIdentifier(connection)
        openConnections.withLock { $0[key] = connection }
        connection.onClose = { [self] in _ = openConnections.withLock { $0.removeValue(forKey: key) } }
        let makeHandler = self.makeHandler
        let handedOver = loop.execute { connection.start(handler: makeHandler(connection)) }
        if !handedOver {
            openConnections.withLock { _ = $0.removeValue(forKey: key) }
            connection.onClose = nil
        }
    }

    /// Sends the refusal message (best effort), shuts down our side, discards what the client already sent
    /// (so the close does not reset the connection before the message arrives), and closes.
    private func refuse(_ fd: Int32) {
        refused.add(1, ordering: .relaxed)
        configuration.refusalMessage.withUnsafeBytes { _ = try? Sys.send(fd, $0) }
        try? Sys.shutdown(fd, how: Sys.shutWrite)
        var scratch = [UInt8](repeating: 0, count: 4096)
        scratch.withUnsafeMutableBytes { _ = try? Sys.receive(fd, $0) }
        try? Sys.close(fd)
    }

    /// Out of descriptors or memory: stop accepting for a moment instead of spinning on a ready listener.
    private func handleAcceptError(_ error: SystemError) {
        switch error.code {
        case ECONNABORTED, EPROTO, EPERM:
            return
        default:
            guard let registration = listenerState.withLock({ $0.registration }) else { return }
            try? acceptLoop.modify(registration, interest: [])
            acceptLoop.schedule(after: .milliseconds(100)) {
                guard let current = self.listenerState.withLock({ $0.registration }) else { return }
                try? self.acceptLoop.modify(current, interest: .readable)
            }
        }
    }
}
