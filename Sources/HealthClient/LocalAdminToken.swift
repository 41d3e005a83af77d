import Foundation
import HealthModel
import HealthPosix

/// Finding the admin token hkd wrote in its data directory, for a client on the server's own host: the one
/// implementation behind `hkq`'s discovery and ``ClientConfiguration/useLocalAdminToken(dataDirectory:)``.
///
/// Opt-in only: a ``ClientConfiguration`` never reads a file by itself. The rules are hkq's: the server must be on a
/// loopback address (``ClientConfiguration/isLoopback(_:)``), and the file must be readable and hold a token
/// (surrounding white space is dropped). The file's mode is not checked here, as hkq never did: hkd writes it 0600 and refuses to
/// start while it is readable by group or others (SECURITY.md), and a client that can read it runs as hkd's user
/// (or root). The token is never sent: the handshake proves knowledge of it, and only to a server that proves it
/// holds the token's verifier, so a process squatting on the port learns nothing.
extension ClientConfiguration {
    /// hkd's default `--data-dir`, relative to the working directory.
    public static let defaultDataDirectory = "./hkd-data"
    /// The name of the file in hkd's data directory holding the first admin token.
    public static let adminTokenFileName = "admin.token"

    /// The admin token in `dataDirectory`'s `admin.token`, for a server at `host` on this machine.
    ///
    /// - Parameters:
    ///   - host: the server's host; only a loopback one (`localhost`, `::1`, `127.x.x.x`) is allowed.
    ///   - dataDirectory: hkd's `--data-dir`; relative paths start at the working directory.
    /// - Throws: ``HealthModel/ErrorCode/invalidArgument`` when `host` is not a loopback address;
    ///   ``HealthModel/ErrorCode/unauthenticated`` naming the file when it is missing, unreadable or empty.
    ///   Both are local errors. Reads one small file on the calling thread.
    public static func localAdminToken(
        host: String, dataDirectory: String = defaultDataDirectory
    ) throws(HealthClientError) -> String {
        try localAdminToken(host: host, tokenFile: adminTokenPath(dataDirectory: dataDirectory))
    }

    /// As ``localAdminToken(host:dataDirectory:)``, with the token file's path given in full.
    public static func localAdminToken(host: String, tokenFile path: String) throws(HealthClientError) -> String {
        guard isLoopback(host) else {
            throw .local(
                .invalidArgument,
                "the local admin token is only for a server on this host (localhost, ::1, 127.x.x.x), not '\(host)'; "
                    + "give this client a token of its own")
        }
        let token: String?
        do {
            token = try readTokenFile(path)
        } catch {
            throw .local(
                .unauthenticated, "no local admin token: cannot read '\(path)' (\(error.message)); \(tokenFileHint)")
        }
        guard let token else {
            throw .local(.unauthenticated, "no local admin token: '\(path)' is empty; \(tokenFileHint)")
        }
        return token
    }

    /// Sets ``token`` to the admin token hkd wrote in `dataDirectory` (``localAdminToken(host:dataDirectory:)`` for
    /// this configuration's ``host``): the discovery `hkq` does by itself, asked for explicitly.
    ///
    /// ```swift
    /// var configuration = ClientConfiguration(port: 7420, clientName: "local-agent")
    /// try configuration.useLocalAdminToken()                       // ./hkd-data/admin.token
    /// let client = HealthClient(configuration)
    /// ```
    ///
    /// - Throws: as ``localAdminToken(host:dataDirectory:)``; the configuration is then unchanged.
    public mutating func useLocalAdminToken(dataDirectory: String = defaultDataDirectory) throws(HealthClientError) {
        token = try Self.localAdminToken(host: host, dataDirectory: dataDirectory)
    }

    /// `dataDirectory/admin.token`.
    package static func adminTokenPath(dataDirectory: String) -> String {
        (dataDirectory.hasSuffix("/") ? dataDirectory : dataDirectory + "/") + adminTokenFileName
    }

    /// The content of the file at `path` (a token is one line), trimmed; `nil` when that leaves nothing, a system
    /// error when it cannot be read. (hkq reads `--token-file` with it too.)
    package static func readTokenFile(_ path: String) throws(SystemError) -> String? {
        // Read through POSIX: usually there is no such file, and building Foundation's error for that is a
        // noticeable part of a short hkq command. A token is a line; the cap keeps a wrong path cheap.
        let bytes = try FileSystem.readFile(path, maxBytes: 1 << 16)
        let token = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }

    private static let tokenFileHint =
        "start the client in the directory holding hkd's data directory, name that directory, or pass a token"
}
