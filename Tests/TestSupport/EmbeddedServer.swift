import HealthEngine
import HealthModel
import HealthServer
import HealthWire

/// hkd's connection logic in this process, without a socket, a thread or the wall clock: the real
/// ``ConnectionStateMachine`` and ``RequestDispatcher`` over a ``HealthStore`` in memory, bytes in and out
/// through memory, and a clock that moves only when the test says (``advance(by:)``). NIO's `EmbeddedChannel`
/// and `HummingbirdTesting` in one: for protocol, handshake, error and dispatch tests.
///
/// `EmbeddedServer(arguments:)` takes hkd's own arguments (`["--auth", "off"]`, `["--idle-timeout", "1"]`); with
/// authorization on it opens the identities in a fresh ``TestDirectory`` and ``token`` is the admin's, as with
/// ``TestServer``. ``session(name:token:)`` returns a connection past its handshake, ``connect()`` a raw one.
///
/// What it leaves out, and the process tests (``TestServer``) keep: sockets and the listener's limits, TLS, the
/// event loop's backpressure and memory budget, the failure throttle's delays, subscriptions (a `subscribe` gets
/// the dispatcher's `unsupportedRequest`), the write-ahead log and restarts, cluster mode, hkq.
///
/// A request runs to completion before the next action of the connection is carried out, its reply written
/// after the writes that came before it: one of the orders the event loop and its workers can produce. Not
/// thread-safe: one test drives it.
public final class EmbeddedServer {
    /// The settings parsed from the arguments (the data directory unused but for identities).
    public let configuration: ServerConfiguration
    /// The store every connection's requests reach.
    public let store: HealthStore
    /// The identities with authorization on (`nil` with `--auth off`).
    public let identities: IdentityRegistry?
    /// The admin token made at the start ("" with `--auth off`).
    public let token: String
    /// The instant the server's clock shows; moved only by ``advance(by:)``.
    public private(set) var now: ContinuousClock.Instant
    let dispatcher: RequestDispatcher
    let authenticator: any HandshakeAuthenticator
    private let directory: TestDirectory?
    /// Every connection made, held weakly: a connection keeps its server alive, not the other way round.
    private var connections: [WeakConnection] = []
    private var nextConnectionID: UInt64 = 1
    private var lastBatchID: UInt64 = 0

    /// A server as hkd `arguments` configure it (`--listen` and `--data-dir` are not needed).
    public init(arguments: [String] = []) throws {
        guard case .run(var configuration) = try ServerConfiguration.parse(arguments) else {
            throw HealthError(.invalidArgument, "\(arguments) do not run a server")
        }
        try configuration.checkLimits()
        if configuration.auth == .required {
            let directory = try TestDirectory(prefix: "hkd-embedded")
            configuration.dataDirectory = directory.path
            let registry = try IdentityRegistry.open(directory: directory.path) { _ in }
            let text = try String(
                contentsOfFile: directory.path + "/" + IdentityRegistry.adminTokenFileName, encoding: .utf8)
            (self.directory, identities, token) = (
                directory, registry, text.trimmingCharacters(in: .whitespacesAndNewlines)
            )
            authenticator = TokenAuthenticator(registry: registry)
        } else {
            (directory, identities, token) = (nil, nil, "")
            authenticator = OpenAuthenticator()
        }
        self.configuration = configuration
        let store = HealthStore()
        store.deletionRetention = Int64(clamping: configuration.deletedRetentionSeconds) * 1_000_000
        self.store = store
        let started = ContinuousClock.now
        now = started
        var dispatcher = RequestDispatcher(store: store, limits: configuration.sessionLimits) {
            .init(version: HealthServer.version, uptimeMicros: 0, connections: 0, residentBytes: 0)
        }
        dispatcher.identities = identities
        dispatcher.subscriptions = SubscriptionHub()
        self.dispatcher = dispatcher
    }

    /// A new connection that has sent nothing yet.
    public func connect() -> EmbeddedConnection {
        let connection = EmbeddedConnection(server: self, id: nextConnectionID)
        nextConnectionID += 1
        connections.removeAll { $0.connection == nil }
        connections.append(WeakConnection(connection: connection))
        return connection
    }

    /// A new connection past its handshake as `name`, with the admin token unless `token` is given ("" for none);
    /// throws the server's refusal.
    public func session(name: String = "embedded-test", token: String? = nil) throws -> EmbeddedConnection {
        let connection = connect()
        try connection.handshake(name: name, token: token ?? self.token)
        return connection
    }

    /// A batch id no batch inserted through this server's connections had yet.
    public func makeBatchID() -> UInt64 {
        lastBatchID += 1
        return lastBatchID
    }

    /// Moves the clock on by `duration` and lets every open connection act on the deadlines passed.
    public func advance(by duration: Duration) {
        now = now + duration
        for case let connection? in connections.map(\.connection) where !connection.isClosed { connection.tick() }
    }

    private struct WeakConnection {
        weak var connection: EmbeddedConnection?
    }
}

/// One connection to an ``EmbeddedServer``: what the test sends goes straight into the server's state machine,
/// what the server writes waits in memory until the test reads it.
public final class EmbeddedConnection {
    /// Why the server closed the connection, once it did.
    public private(set) var closeReason: String?
    /// Whether the server closed the connection dropping replies not yet read (a peer that did not read them).
    public private(set) var wasAborted = false
    /// The welcome of ``handshake(name:token:)``.
    public private(set) var welcome: Welcome?
    private let server: EmbeddedServer
    private var machine: ConnectionStateMachine
    private var written: [UInt8] = []
    private var decoder = FrameDecoder(limits: FrameLimits(maxFrameBytes: 1 << 30, maxInflatedBytes: 1 << 30))
    /// Replies of requests run but not yet written, in the order they completed.
    private var completed: [() -> [ConnectionStateMachine.Action]] = []
    private var nextRequestID: UInt32 = 1

    init(server: EmbeddedServer, id: UInt64) {
        self.server = server
        machine = ConnectionStateMachine(
            limits: server.configuration.sessionLimits, serverVersion: HealthServer.version, connectionID: id,
            deadlines: server.configuration.deadlines, now: server.now, authenticator: server.authenticator)
    }

    /// Whether the server closed the connection.
    public var isClosed: Bool { closeReason != nil }

    /// Hands `bytes` to the server as if they arrived on the socket (ignored once it closed).
    public func send(_ bytes: [UInt8]) {
        guard !isClosed else { return }
        perform(machine.received(bytes, now: server.now))
    }

    /// Sends `message` as one frame.
    public func send(_ message: Message, requestID: UInt32, flags: FrameFlags = []) {
        send(FrameEncoder().encode(message.frame(requestID: requestID, flags: flags)))
    }

    /// The bytes the server wrote since the last read.
    public func readBytes() -> [UInt8] {
        defer { written = [] }
        return written
    }

    /// The frames the server wrote since the last read (a frame cut short stays for the next read).
    public func readFrames() throws -> [Frame] {
        decoder.append(readBytes())
        var frames: [Frame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        return frames
    }

    /// The messages the server wrote since the last read, decoded.
    public func readMessages() throws -> [Message] {
        try readFrames().map { try Message.decode($0) }
    }

    /// Sends `message` with a new request id and returns its reply: every frame of that id up to the first
    /// without the ``FrameFlags/more`` flag. Throws when the server answered it incompletely or not at all.
    public func request(_ message: Message) throws -> [Message] {
        let id = nextRequestID
        nextRequestID += 1
        send(message, requestID: id)
        var replies: [Message] = []
        for frame in try readFrames() where frame.requestID == id {
            replies.append(try Message.decode(frame))
            if !frame.flags.contains(.more) { return replies }
        }
        throw HealthError(
            .internalError,
            "no complete reply to \(message.kind) (got \(replies.map(\.kind)))"
                + (closeReason.map { "; the server closed the connection: \($0)" } ?? ""))
    }

    /// Sends `request` and returns its one reply, typed as HealthClient's `send` returns it; throws the server's
    /// ``ErrorReply`` as a ``HealthError`` (its code and message).
    public func send<R: Request>(_ request: R) throws -> R.Reply {
        let replies = try self.request(Message(request))
        guard replies.count == 1 else { throw HealthError(.internalError, "\(replies.count) replies to \(R.kind)") }
        return try Self.typed(replies[0], as: R.self)
    }

    /// Sends `request` and returns every frame of its answer, typed.
    public func sendStreamed<R: StreamedRequest>(_ request: R) throws -> [R.Reply] {
        try self.request(Message(request)).map { try Self.typed($0, as: R.self) }
    }

    /// Stores `samples` in batches of at most `maxBatchRows` rows (each of a subject and a type), as HealthClient's
    /// `insert` does.
    @discardableResult
    public func insert(_ samples: [Sample], maxBatchRows: Int = 100_000) throws -> [InsertAck] {
        try SampleBatch.grouping(samples, maxRows: maxBatchRows, makeBatchID: server.makeBatchID).map {
            try send(Insert(batch: $0))
        }
    }

    private static func typed<R: Request>(_ reply: Message, as request: R.Type) throws -> R.Reply {
        if case .error(let refusal) = reply { throw refusal.healthError }
        guard let typed = reply.body as? R.Reply else {
            throw HealthError(.internalError, "\(R.kind) was answered with \(reply.kind)")
        }
        return typed
    }

    /// The error a request was refused with, or nil when it was answered.
    public func refusal(_ message: Message) throws -> ErrorReply? {
        let replies = try request(message)
        if replies.count == 1, case .error(let reply) = replies[0] { return reply }
        return nil
    }

    /// The client's side of the handshake (hello; the challenge's proof with a token), as HealthClient performs
    /// it; checks the server's signature and returns the welcome. Throws the server's refusal.
    @discardableResult
    public func handshake(name: String, token: String, seed: UInt64 = 1) throws -> Welcome {
        var generator = SplitMix64(seed: seed)
        let nonce = (0..<TokenAuthentication.nonceBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var handshake = try ClientHandshake(clientName: name, token: token, nonce: token.isEmpty ? [] : nonce)
        send(.hello(handshake.hello), requestID: 0)
        while true {
            let frames = try readFrames()
            guard !frames.isEmpty else {
                throw HealthError(.connectionLost, "the server answered nothing to the handshake: \(closeReason ?? "")")
            }
            for frame in frames {
                switch try Message.decode(frame) {
                case .challenge(let challenge):
                    let proof = try handshake.respond(to: challenge, payload: frame.payload)
                    send(.proof(proof), requestID: 0)
                case .welcome(let welcome):
                    try handshake.check(welcome)
                    self.welcome = welcome
                    return welcome
                case .error(let reply):
                    throw reply.healthError
                default:
                    throw HealthError(.malformedFrame, "unexpected \(frame.kind) in the handshake")
                }
            }
        }
    }

    /// The machine's deadlines at the server's current instant.
    func tick() { perform(machine.tick(now: server.now)) }

    /// Carries out the machine's actions as ServerConnection does, running requests at once but writing their
    /// replies only after the actions that came before.
    private func perform(_ actions: [ConnectionStateMachine.Action]) {
        for action in actions {
            guard !isClosed else { return }
            switch action {
            case .write(let bytes):
                written += bytes
            case .dispatch(let requestID, let request, let identity):
                let replies = server.dispatcher.handle(request.message, identity: identity)
                completed.append { [self] in
                    written += FrameEncoder().encode(replies: replies, requestID: requestID)
                    if replies.count == 1, case .error(let reply) = replies[0],
                        reply.code == ErrorCode.tokenRevoked.rawValue
                    {
                        closeReason = "identity \"\(identity.name)\" was revoked"
                    }
                    return machine.requestCompleted(now: server.now)
                }
            case .decode(let frame, let identity):
                let outcome = ConnectionStateMachine.decodeRequest(frame, limits: server.configuration.sessionLimits)
                completed.append { [self] in machine.decoded(outcome, frame: frame, identity: identity, now: server.now)
                }
            case .close(let reason):
                closeReason = reason
            case .abort(let reason):
                closeReason = reason
                wasAborted = true
                written = []
            }
        }
        while !completed.isEmpty, !isClosed {
            perform(completed.removeFirst()())
        }
    }

}
