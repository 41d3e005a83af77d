import Foundation
import HealthClient
import HealthModel
import Synchronization

/// The real `hkd` binary running on port 0 with a temporary data directory, for integration tests.
final class HKDProcess: Sendable {
    let port: Int
    let dataDirectory: String
    /// The admin token hkd wrote at its first start ("" with `--auth off`).
    let token: String
    private let process: Process
    private let log: LogBuffer

    /// The package root, found from this file's path.
    static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// A built product of this package (`swift test` builds every product first).
    static func binary(_ name: String) throws -> URL {
        let candidates = [
            Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent(name),
            packageRoot.appendingPathComponent(".build/debug/\(name)"),
        ].compactMap { $0 }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw HealthError(
                .internalError, "\(name) is not built (looked in \(candidates.map(\.path))); run swift build first")
        }
        return found
    }

    /// Starts hkd on `host`:`port` (0: a free one) and waits until it logs the port it listens on.
    init(dataDirectory: String? = nil, host: String = "127.0.0.1", port requestedPort: Int = 0, arguments: [String] = []) async throws {
        let directory =
            dataDirectory
            ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("hkd-test-\(UUID().uuidString)").path
        self.dataDirectory = directory
        let process = Process()
        process.executableURL = try HKDProcess.binary("hkd")
        process.arguments = ["--listen", "\(host):\(requestedPort)", "--data-dir", directory] + arguments
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        let log = LogBuffer()
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            log.append(String(decoding: data, as: UTF8.self))
        }
        try process.run()
        self.process = process
        self.log = log
        let deadline = ContinuousClock.now + .seconds(20)
        var found: Int?
        while found == nil {
            found = HKDProcess.port(in: log.text, host: host)
            if found != nil { break }
            if !process.isRunning || ContinuousClock.now > deadline {
                process.terminate()
                throw HealthError(.internalError, "hkd did not start: \(log.text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        port = found!
        let tokenFile = (try? String(contentsOfFile: directory + "/admin.token", encoding: .utf8)) ?? ""
        token = tokenFile.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// hkq's options to reach this server as the admin identity.
    var hkqServer: [String] { ["--server", "127.0.0.1:\(port)", "--token", token] }

    private static func port(in log: String, host: String) -> Int? {
        guard let range = log.range(of: "listening on \(host):") else { return nil }
        return Int(log[range.upperBound...].prefix { $0.isNumber })
    }

    /// Everything hkd logged so far.
    var logText: String { log.text }

    var isRunning: Bool { process.isRunning }

    /// The process id while running.
    var processIdentifier: Int32? { process.isRunning ? process.processIdentifier : nil }

    /// A client for this server.
    func client(name: String = "integration-test", token: String? = nil) -> HealthClient {
        HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: port, token: token ?? self.token, clientName: name,
                requestTimeout: .seconds(30)))
    }

    /// SIGTERM, then waits for the exit; returns the exit status.
    @discardableResult
    func stop() async -> Int32 {
        if process.isRunning { process.terminate() }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        return process.terminationStatus
    }

    /// SIGKILL, then waits.
    func kill() async {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// Text appended from one thread and read from others.
final class LogBuffer: Sendable {
    private let storage = Mutex("")
    func append(_ text: String) { storage.withLock { $0 += text } }
    var text: String { storage.withLock { $0 } }
}
