import Foundation
import HealthClient
import HealthServer
import HealthStorage

/// The hkd a workload talks to: one started in this process on a free port with a temporary data directory,
/// or an external one given by `--server HOST:PORT`.
///
/// An in-process server shares this process's memory and cores with the client; its ``residentBytes`` is the
/// whole process's. Thread-safe after `start`.
final class BenchServer: Sendable {
    let host: String
    let port: Int
    /// The server when it runs in this process (its store can be queried directly).
    let local: HealthServer?
    private let dataDirectory: String?
    /// How clients reach it over TLS; nil for plaintext.
    let tls: TLSClientOptions?

    private init(host: String, port: Int, local: HealthServer?, dataDirectory: String?, tls: TLSClientOptions?) {
        self.host = host
        self.port = port
        self.local = local
        self.dataDirectory = dataDirectory
        self.tls = tls
    }

    /// Starts an in-process server (`address` nil) or names the external one at `HOST:PORT`. With `tls`, the
    /// in-process server runs `--tls auto` and clients pin its certificate; an external one is reached with the
    /// CA file or fingerprint of `HKQ_TLS_CA` / `HKQ_TLS_FINGERPRINT`, as hkq does.
    static func start(address: String?, fsync: FsyncPolicy = .always, tls: Bool = false) throws -> BenchServer {
        if let address {
            guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
                (1...65535).contains(port), colon > address.startIndex
            else { throw UsageError(message: "--server needs HOST:PORT, not '\(address)'") }
            let environment = ProcessInfo.processInfo.environment
            let options = TLSClientOptions(
                caFile: environment["HKQ_TLS_CA"],
                fingerprint: environment["HKQ_TLS_FINGERPRINT"].flatMap(CertificateFingerprint.init))
            return BenchServer(
                host: String(address[..<colon]), port: port, local: nil, dataDirectory: nil, tls: tls ? options : nil)
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("hkbench-\(UUID().uuidString)").path
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.dataDirectory = directory
        configuration.fsync = fsync
        // The figures are about storage and the wire; tokens would add one hash per connection and nothing else.
        configuration.auth = .off
        configuration.tls = tls ? .auto : .off
        let server = try HealthServer.start(configuration)
        let pin = tls ? try CertificateFingerprint.ofCertificateFile(directory + "/tls-certificate.pem") : nil
        return BenchServer(
            host: "127.0.0.1", port: server.port, local: server, dataDirectory: directory,
            tls: pin.map { TLSClientOptions(fingerprint: $0) })
    }

    /// Where the server is, for reports.
    var description: String {
        (local == nil ? "external hkd at \(host):\(port)" : "in-process HealthServer on 127.0.0.1:\(port)")
            + (tls == nil ? "" : " over TLS")
    }

    /// A client with no retries (a benchmark must see every failure) and generous timeouts; for an external hkd
    /// that requires tokens it presents `HKQ_TOKEN` from the environment, as hkq does.
    func client() -> HealthClient {
        HealthClient(
            ClientConfiguration(
                host: host, port: port, token: ProcessInfo.processInfo.environment["HKQ_TOKEN"] ?? "",
                clientName: "hkbench", requestTimeout: .seconds(300), retry: .none, tls: tls))
    }

    /// Stops an in-process server and removes its data directory; nothing for an external one.
    func stop() {
        local?.stop()
        if let dataDirectory { try? FileManager.default.removeItem(atPath: dataDirectory) }
    }
}
