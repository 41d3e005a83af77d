import HealthClient

extension CommandContext {
    /// The token to present: `--token`, else `HKQ_TOKEN`, else — when the server is on this host — the admin
    /// token hkd wrote to `./hkd-data/admin.token` (its default data directory) if that file is readable;
    /// else none. The discovery is HealthClient's (``HealthClient/ClientConfiguration/localAdminToken(host:tokenFile:)``),
    /// whose errors hkq drops: without a token the server's refusal says what to pass. The handshake never sends
    /// a token, only a proof of it, and only to a server that proves it holds the token's verifier
    /// (Protocol/PROTOCOL.md "Authentication").
    public var resolvedToken: String {
        if let token = globals.token { return token }
        return (try? ClientConfiguration.localAdminToken(host: globals.server.host, tokenFile: program.localTokenPath))
            ?? ""
    }
}

/// Finding hkd's admin token on the local machine: HealthClient's rules (``HealthClient/ClientConfiguration``'s
/// `localAdminToken`), under the names hkq's code and tests use.
public enum LocalToken {
    /// Where `hkd` with its default `--data-dir` keeps the admin token, relative to the working directory.
    public static let defaultPath = ClientConfiguration.adminTokenPath(
        dataDirectory: ClientConfiguration.defaultDataDirectory)

    /// Whether `host` names this machine's loopback interface.
    public static func isLoopback(_ host: String) -> Bool { ClientConfiguration.isLoopback(host) }

    /// The content of the file at `path`, trimmed; `nil` when it is unreadable or empty.
    public static func read(_ path: String) -> String? {
        (try? ClientConfiguration.readTokenFile(path)) ?? nil
    }
}
