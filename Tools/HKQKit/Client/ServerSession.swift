import HealthClient
import HealthModel
import Synchronization

/// Opens a client on the server hkq was pointed at, runs a command's requests on it, then closes it.
///
/// A server that cannot be reached (or answers busy, shutting down) is retried for `--retry-for` (30 s by
/// default), the first retry saying so on stderr: `waiting for hkd at HOST:PORT (retrying for up to 30 s)…`.
/// Turns client failures into one-line errors: a server still unreachable after that becomes
/// `cannot connect to HOST:PORT: REASON — is hkd running? start it with: swift run -c release hkd`; a server
/// refusal keeps the server's message. The connection is opened before the body runs.
public enum ServerSession {
    /// The hint appended to connection failures.
    public static let startHint = "is hkd running? start it with: swift run -c release hkd"

    /// Connects to `context`'s server with its token, runs `body`, and closes the connection whatever happens.
    public static func run<T: Sendable>(
        _ context: CommandContext, _ body: (HealthClient) async throws -> T
    ) async throws -> T {
        let globals = context.globals
        let client = Self.client(context, connectTimeout: .seconds(5))
        defer { client.close() }
        do {
            if context.program.ownsThread {
                _ = try client.connectInPlace()
            } else {
                _ = try await client.connect()
            }
        } catch {
            throw connectionFailure(error, server: globals.server)
        }
        do {
            return try await body(client)
        } catch let error as HealthClientError {
            throw error.error
        }
    }

    /// A client of `context`'s server that says on stderr, once, when it starts waiting for the server.
    static func client(_ context: CommandContext, connectTimeout: Duration = .seconds(10)) -> HealthClient {
        if let inProcess = context.program.inProcessClient { return inProcess() }
        let notice = WaitingNotice(server: context.globals.server, sink: context.console.err)
        return HealthClient(configuration(context, connectTimeout: connectTimeout)) { notice.retrying($0) }
    }

    /// How hkq reaches `context`'s server: its address, token, TLS options and retry budget.
    static func configuration(_ context: CommandContext, connectTimeout: Duration = .seconds(10)) -> ClientConfiguration
    {
        let globals = context.globals
        var configuration = ClientConfiguration(
            host: globals.server.host, port: Int(globals.server.port), token: context.resolvedToken,
            clientName: "hkq", connectTimeout: connectTimeout, retry: RetryPolicy(budget: globals.retryFor),
            tls: globals.tls)
        // Over loopback, deflating requests (an import's batches) would only cost both ends CPU time.
        configuration.compressesRequests = !ClientConfiguration.isLoopback(globals.server.host)
        return configuration
    }

    /// The one-line error for a failed connect: the reason after the last colon of the client's message.
    static func connectionFailure(_ error: HealthClientError, server: ServerAddress) -> HealthError {
        if error.code == .unauthenticated {
            return HealthError(
                error.code,
                "\(error.message) — pass --token or set HKQ_TOKEN (hkd's admin token is in its data directory, admin.token)"
            )
        }
        if error.code == .serverUnverified {
            return HealthError(
                error.code,
                "refusing \(server): \(error.message) — is something other than hkd listening there? (\(error.code))")
        }
        if (108...110).contains(error.code.rawValue) || (304...308).contains(error.code.rawValue) {
            // TLS: name the code, so scripts and people can tell a pin from a CA from a plaintext mix-up.
            return HealthError(error.code, "\(error.message) (\(error.code))")
        }
        guard error.code == .connectionLost || error.code == .timedOut else { return error.error }
        let reason =
            error.message.split(separator: ":", omittingEmptySubsequences: false).last
            .map { $0.trimmingPrefix(" ") }.map(String.init) ?? error.message
        return HealthError(error.code, "cannot connect to \(server): \(reason) — \(startHint)")
    }
}

/// The line hkq prints on stderr at the first retry of a command, so that a server that is simply not there
/// does not look like a hang: `waiting for hkd at 127.0.0.1:7420 (retrying for up to 30 s)…`.
final class WaitingNotice: Sendable {
    private let server: ServerAddress
    private let sink: any TextSink
    private let printed = Atomic(false)

    init(server: ServerAddress, sink: any TextSink) {
        self.server = server
        self.sink = sink
    }

    /// Prints the line the first time it is called.
    func retrying(_ retry: RetryEvent) {
        guard !printed.exchange(true, ordering: .relaxed) else { return }
        sink.write("\(Self.line(server: server, budget: retry.budget))\n")
    }

    /// The line, the budget in whole seconds (tenths under ten).
    static func line(server: ServerAddress, budget: Duration) -> String {
        let seconds = Double(budget.components.seconds) + Double(budget.components.attoseconds) / 1e18
        let tenths = Int((seconds * 10).rounded())
        let shown = tenths >= 100 || tenths % 10 == 0 ? "\((tenths + 5) / 10)" : "\(tenths / 10).\(tenths % 10)"
        return "waiting for hkd at \(server) (retrying for up to \(shown) s)\u{2026}"
    }
}
