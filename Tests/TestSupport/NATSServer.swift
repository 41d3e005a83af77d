import Foundation
import HealthModel
import HealthPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A real `nats-server` with JetStream for the cluster tests: on a free loopback port, storing in a temporary
/// directory of its own, the way ``TestServer`` runs hkd.
///
/// `try await NATSServer()` returns once the server logged its client port and answered a connection there with
/// its `INFO` line (JetStream starts before the client listener). ``kill()`` (SIGKILL) and ``stop()`` (SIGTERM)
/// wait for the exit; a server released while it still runs is killed, and its store directory removed, so
/// none outlives a test.
public final class NATSServer: Sendable {
    /// The client port.
    public let port: Int
    /// JetStream's store directory.
    public let storeDirectory: TestDirectory
    private let child: HKDChild

    /// Starts `nats-server -js` on `host` and `port` (a free one when `nil`), storing in a fresh directory
    /// unless `storeDirectory` is given (a restart on the same store); as `member` of a cluster when given; in
    /// the network namespace `namespace` when given (``NamespaceNetwork``); with `configuration` (the text of
    /// a nats-server configuration file, such as `ping_interval: "1s"`) when given.
    public init(
        host: String = "127.0.0.1", port: Int? = nil, storeDirectory: TestDirectory? = nil,
        member: ClusterMember? = nil, namespace: String? = nil, configuration: String? = nil,
        startTimeout: Duration = .seconds(30)
    ) async throws {
        let store = try storeDirectory ?? TestDirectory(prefix: "hkd-nats")
        var arguments =
            ["-a", host, "-p", port.map(String.init) ?? "-1", "-js", "-sd", store.path] + (member?.arguments ?? [])
        if let configuration {
            let file = store.path + "/nats-server.conf"
            try configuration.write(toFile: file, atomically: false, encoding: .utf8)
            arguments = ["-c", file] + arguments
        }
        let child = try HKDChild(
            binary: namespace == nil ? try Self.binary() : NamespaceNetwork.ip,
            arguments: namespace.map { ["netns", "exec", $0, try Self.binary().path] + arguments } ?? arguments,
            name: "nats-server")
        var found: Int?
        do {
            try await waitUntil(timeout: startTimeout, "nats-server to listen and answer, or to exit") {
                if child.exitStatus != nil { return true }
                guard let port = Self.port(in: child.output.text, host: host) else { return false }
                guard Self.answers(host, port) else { return false }
                found = port
                return true
            }
        } catch {
            await child.end(SIGKILL)
            throw HealthError(.internalError, "nats-server did not start within \(startTimeout): \(child.output.text)")
        }
        guard let found else {
            let status = await child.end(nil)
            throw HealthError(
                .internalError, "nats-server did not start (exit status \(status)): \(child.output.text)")
        }
        self.port = found
        self.host = host
        self.namespace = namespace
        self.configuration = configuration
        self.member = member
        self.storeDirectory = store
        self.child = child
    }

    /// One server of a NATS cluster: its name, its route address and every member's route address.
    public struct ClusterMember: Sendable {
        public var name: String
        public var route: Route
        public var routes: [Route]

        /// A member's route listener.
        public struct Route: Sendable, Equatable {
            public var host: String
            public var port: Int
            public init(host: String = "127.0.0.1", port: Int) {
                self.host = host
                self.port = port
            }
        }

        public init(name: String, route: Route, routes: [Route]) {
            self.name = name
            self.route = route
            self.routes = routes
        }

        /// On loopback: route port `routePort` among the members' `routePorts`.
        public init(name: String, routePort: Int, routePorts: [Int]) {
            self.init(name: name, route: Route(port: routePort), routes: routePorts.map { Route(port: $0) })
        }

        /// nats-server's arguments for it: the cluster `hkd-test`, routes to every other member.
        var arguments: [String] {
            let others = routes.filter { $0 != route }.map { "nats-route://\($0.host):\($0.port)" }
            return [
                "--server_name", name, "--cluster_name", "hkd-test", "--cluster", "nats://\(route.host):\(route.port)",
                "--routes", others.joined(separator: ","),
            ]
        }
    }

    /// The member this server is of a cluster started by ``cluster(size:)``; `nil` for a lone server.
    public let member: ClusterMember?

    /// `size` servers forming one JetStream cluster on loopback (route ports picked free, each with its own
    /// store), on `clientPorts` when given (one per server; free ones otherwise). They are listening when this
    /// returns; JetStream elects its leader a moment later, so wait on a first successful request.
    public static func cluster(size: Int, clientPorts: [Int]? = nil) async throws -> [NATSServer] {
        precondition(clientPorts == nil || clientPorts?.count == size, "one client port per server")
        var attempt = 1
        while true {
            let routePorts = try (0..<size).map { _ in try freePort() }
            var servers: [NATSServer] = []
            do {
                for (index, port) in routePorts.enumerated() {
                    servers.append(
                        try await NATSServer(
                            port: clientPorts?[index],
                            member: ClusterMember(name: "n\(index + 1)", routePort: port, routePorts: routePorts)))
                }
                return servers
            } catch  where attempt < 3 {
                // A route port taken between the check and the start (another test's server): new ports.
                for server in servers { await server.kill() }
                attempt += 1
            }
        }
    }

    /// This server again on its store (and, in a cluster, its route port) after ``kill()`` or ``stop()``; its
    /// client port is a new one.
    public func restart() async throws -> NATSServer {
        try await NATSServer(
            host: host, storeDirectory: storeDirectory, member: member, namespace: namespace,
            configuration: configuration)
    }

    /// The URLs of `ports` on loopback, comma-separated, as hkd's `--cluster` takes them.
    public static func urls(_ ports: [Int]) -> String {
        ports.map { "nats://127.0.0.1:\($0)" }.joined(separator: ",")
    }

    /// The next port to try for a route, or a client port known before its server starts: below Linux's
    /// ephemeral range (32768-60999), where no port-0 listener and no outgoing connection of a test running
    /// beside this one takes it before its server starts; spread by process so two test processes seldom try
    /// the same ones.
    private static let nextPort = Atomic(20_000 + Int(getpid()) % 10_000)

    /// A loopback port below the ephemeral range that nothing listens on right now.
    public static func freePort() throws -> Int {
        for _ in 0..<2_000 {
            let port = 20_000 + (nextPort.add(1, ordering: .relaxed).oldValue - 20_000) % 12_000
            guard let socket = try? ListeningSocket.bind(host: "127.0.0.1", port: port) else { continue }
            socket.close()
            return port
        }
        throw HealthError(.internalError, "no free loopback port between 20000 and 32000 for a NATS server")
    }

    /// The client address and the network namespace the server runs in (`nil`: this process's).
    public let host: String
    public let namespace: String?
    /// The configuration file's text it was started with.
    public let configuration: String?

    /// `nats://HOST:PORT`.
    public var url: String { "nats://\(host):\(port)" }

    /// What the server logged so far; all of it once ``stop()`` or ``kill()`` returned.
    public var logText: String { child.output.text }

    /// SIGKILL; returns once the server is gone.
    public func kill() async { await child.end(SIGKILL) }

    /// SIGSTOP: the server answers nothing (its connections stay open, what clients send waits in their
    /// sockets) until ``resume()``.
    public func pause() { child.signal(SIGSTOP) }

    /// SIGCONT after ``pause()``.
    public func resume() { child.signal(SIGCONT) }

    /// SIGTERM (a clean shutdown); returns the exit status.
    @discardableResult
    public func stop() async -> Int32 { await child.end(SIGTERM) }

    deinit { child.killNow() }

    /// `nats-server` on the PATH, or Debian's `/usr/sbin/nats-server`.
    static func binary() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/nats-server" } + ["/usr/sbin/nats-server"]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw HealthError(.internalError, "nats-server is not installed (apt-get install nats-server)")
        }
        return URL(fileURLWithPath: found)
    }

    /// The port of the "Listening for client connections on HOST:PORT" line.
    static func port(in log: String, host: String) -> Int? {
        guard let range = log.range(of: "Listening for client connections on \(host):") else { return nil }
        return Int(log[range.upperBound...].prefix { $0.isNumber })
    }

    /// Whether a connection to `port` gets the server's `INFO` line.
    static func answers(_ host: String, _ port: Int) -> Bool {
        guard let socket = try? ClientSocket.connect(host: host, port: port, timeout: .seconds(1)) else {
            return false
        }
        defer { socket.close() }
        guard let bytes = try? socket.read(maxBytes: 4096, timeout: .seconds(1)) else { return false }
        return bytes.starts(with: Array("INFO ".utf8))
    }
}
