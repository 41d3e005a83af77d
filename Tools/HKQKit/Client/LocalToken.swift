import Foundation
import HealthClient
import HealthPosix

extension CommandContext {
    /// The token to present: `--token`, else `HKQ_TOKEN`, else — when the server is on this host — the admin
    /// token hkd wrote to `./hkd-data/admin.token` (its default data directory) if that file is readable;
    /// else none. The handshake never sends a token, only a proof of it, and only to a server that proves it
    /// holds the token's verifier (Protocol/PROTOCOL.md "Authentication").
    public var resolvedToken: String {
        if let token = globals.token { return token }
        guard LocalToken.isLoopback(globals.server.host) else { return "" }
        return LocalToken.read(program.localTokenPath) ?? ""
    }
}

/// Finding hkd's admin token on the local machine.
public enum LocalToken {
    /// Where `hkd` with its default `--data-dir` keeps the admin token, relative to the working directory.
    public static let defaultPath = "./hkd-data/admin.token"

    /// Whether `host` names this machine's loopback interface.
    public static func isLoopback(_ host: String) -> Bool { ClientConfiguration.isLoopback(host) }

    /// The first line of the file at `path`, trimmed; `nil` when it is unreadable or empty.
    public static func read(_ path: String) -> String? {
        // Read through POSIX: usually there is no such file, and Foundation's error for that costs every command
        // to a local server a tenth of a millisecond to build. A token is a line; the cap keeps a wrong path cheap.
        guard let bytes = try? FileSystem.readFile(path, maxBytes: 1 << 16) else { return nil }
        let token = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }
}
