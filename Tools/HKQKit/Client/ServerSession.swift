import HealthClient
import HealthModel

/// Opens a client on the server hkq was pointed at, runs a command's requests on it, then closes it.
///
/// Turns client failures into one-line errors: a refused or unreachable server becomes
/// `cannot connect to HOST:PORT: REASON — is hkd running? start it with: swift run -c release hkd`; a server refusal keeps
/// the server's message. The connection is opened before the body runs, so a down server fails at once and
/// without retries.
public enum ServerSession {
    /// The hint appended to connection failures.
    public static let startHint = "is hkd running? start it with: swift run -c release hkd"

    /// Connects to `context`'s server with its token, runs `body`, and closes the connection whatever happens.
    public static func run<T: Sendable>(
        _ context: CommandContext, _ body: (HealthClient) async throws -> T
    ) async throws -> T {
        let globals = context.globals
        let client = HealthClient(configuration(context, connectTimeout: .seconds(5)))
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

    /// How hkq reaches `context`'s server: its address, token and TLS options.
    static func configuration(_ context: CommandContext, connectTimeout: Duration = .seconds(10)) -> ClientConfiguration
    {
        let globals = context.globals
        var configuration = ClientConfiguration(
            host: globals.server.host, port: Int(globals.server.port), token: context.resolvedToken,
            clientName: "hkq", connectTimeout: connectTimeout, tls: globals.tls)
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
