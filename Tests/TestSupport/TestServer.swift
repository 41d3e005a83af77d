import Foundation
import HealthClient
import HealthModel
import HealthPosix
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real, built `hkd` binary running on its own port with a temporary data directory: the one server
/// launcher of the tests.
///
/// `try await TestServer()` starts hkd on `127.0.0.1:0` with a fresh ``TestDirectory`` and returns once hkd
/// logged the port it listens on. ``stop()`` (SIGTERM) and ``kill()`` (SIGKILL) wait for the process to exit
/// and for its standard error to reach end of file, so ``logText`` is complete after either.
/// ``restart(arguments:samePort:)`` starts hkd again on the same data directory.
///
/// The data directory is removed when the last server on it goes away (the test's server and the servers it
/// restarted share it), and a server that is released while hkd still runs kills it first, so neither a
/// process nor a directory outlives a test, also one that fails half-way. A directory the test passed in as
/// `dataDirectory:` is the test's to remove, unless it is another ``TestServer``'s (or a ``TestDirectory``'s),
/// which then lives on as long as this server too.
public final class TestServer: Sendable {
    /// The port hkd listens on.
    public let port: Int
    /// The host hkd listens on (`127.0.0.1` unless the test asked for another).
    public let host: String
    /// hkd's data directory.
    public let dataDirectory: String
    /// The admin token hkd wrote at its first start ("" with `--auth off`).
    public let token: String
    /// The arguments after `--listen` and `--data-dir` this server was started with.
    public let arguments: [String]
    /// The directory that owns ``dataDirectory``, kept alive while this server is; nil for a path the test manages.
    private let directory: TestDirectory?
    private let child: HKDChild

    /// Starts hkd and waits until it logged the port it listens on.
    ///
    /// - Parameters:
    ///   - directory: the data directory to use; default a fresh one, removed with the last server on it.
    ///   - dataDirectory: a data directory path the test manages instead (e.g. on a file system it mounted);
    ///     if it is another server's, that directory stays alive with this server too.
    ///   - host: the address to listen on.
    ///   - port: the port to listen on; 0 (the default) for a free one.
    ///   - arguments: further hkd arguments, e.g. `["--auth", "off"]`.
    ///   - startTimeout: how long hkd may take to start before the test fails.
    ///   - whenLogged: a line hkd logs while it starts, and what to do once it did (given hkd's process id)
    ///     before hkd is awaited further: start the NATS server it waits for, say, or signal it.
    ///   - namespace: the network namespace to run hkd in (``NamespaceNetwork``); `nil`: this process's.
    /// - Throws: `HealthError(.internalError)` with hkd's complete log when hkd exits instead of starting (it
    ///   refused the directory, say) or does not start within `startTimeout`.
    public init(
        directory: TestDirectory? = nil, dataDirectory: String? = nil, host: String = "127.0.0.1", port: Int = 0,
        arguments: [String] = [], startTimeout: Duration = .seconds(60),
        whenLogged: (text: String, action: @Sendable (_ processID: Int32) async throws -> Void)? = nil,
        namespace: String? = nil
    ) async throws {
        precondition(directory == nil || dataDirectory == nil, "pass a directory or a data directory path, not both")
        let owner: TestDirectory?
        let path: String
        if let directory {
            (owner, path) = (directory, directory.path)
        } else if let dataDirectory {
            (owner, path) = (TestDirectory.existing(at: dataDirectory), dataDirectory)
        } else {
            let fresh = try TestDirectory(prefix: "hkd-test")
            (owner, path) = (fresh, fresh.path)
        }
        // The HTTP API on a free loopback port, unless the test chose (its default port may be taken, and beyond
        // loopback it needs TLS).
        let http = arguments.contains("--http-listen") ? [] : ["--http-listen", "127.0.0.1:0"]
        let hkdArguments = ["--listen", "\(host):\(port)", "--data-dir", path] + http + arguments
        let child = try HKDChild(
            binary: namespace == nil ? try Self.binary("hkd") : NamespaceNetwork.ip,
            arguments: namespace.map { ["netns", "exec", $0, try Self.binary("hkd").path] + hkdArguments }
                ?? hkdArguments)
        if let (text, action) = whenLogged {
            do {
                try await waitUntil(timeout: startTimeout, "hkd to log \"\(text)\" or to exit") {
                    child.output.text.contains(text) || child.exitStatus != nil
                }
                if child.exitStatus == nil { try await action(child.processIdentifier) }
            } catch {
                await child.end(SIGKILL)
                throw HealthError(.internalError, "\(error); hkd's log: \(child.output.text)")
            }
        }
        self.port = try await Self.listeningPort(of: child, host: host, startTimeout: startTimeout)
        self.host = host
        self.dataDirectory = path
        self.arguments = arguments
        self.directory = owner
        self.child = child
        let tokenFile = (try? String(contentsOfFile: path + "/admin.token", encoding: .utf8)) ?? ""
        token = tokenFile.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// hkd started with exactly `arguments` (no `--listen` or `--data-dir` added: a systemd unit's command line,
    /// say), with `environment` added to the test's, on the data directory `dataDirectory` those settings name,
    /// which the test manages; waits until it logged the port it listens on at `host`.
    public init(
        exactly arguments: [String], environment: [String: String], dataDirectory: String, host: String = "127.0.0.1",
        startTimeout: Duration = .seconds(60)
    ) async throws {
        let child = try HKDChild(binary: try Self.binary("hkd"), arguments: arguments, environment: environment)
        self.port = try await Self.listeningPort(of: child, host: host, startTimeout: startTimeout)
        self.host = host
        self.dataDirectory = dataDirectory
        self.arguments = arguments
        self.directory = TestDirectory.existing(at: dataDirectory)
        self.child = child
        let tokenFile = (try? String(contentsOfFile: dataDirectory + "/admin.token", encoding: .utf8)) ?? ""
        token = tokenFile.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits until `child` logged the port it listens on at `host`, and returns it; throws with hkd's log when it
    /// exits instead or takes longer than `startTimeout`.
    private static func listeningPort(of child: HKDChild, host: String, startTimeout: Duration) async throws -> Int {
        var found: Int?
        do {
            try await waitUntil(timeout: startTimeout, "hkd to log \"listening on \(host):…\" or to exit") {
                found = Self.port(in: child.output.text, host: host)
                return found != nil || child.exitStatus != nil
            }
        } catch {
            await child.end(SIGKILL)
            throw HealthError(.internalError, "hkd did not start within \(startTimeout): \(child.output.text)")
        }
        guard let found else {
            // It exited: wait for the rest of its log (the reason), which may still be in the pipe.
            let status = await child.end(nil)
            throw HealthError(.internalError, "hkd did not start (exit status \(status)): \(child.output.text)")
        }
        return found
    }

    /// hkd again on this server's data directory (which both then keep alive), usually after ``stop()`` or
    /// ``kill()``; with the same arguments unless `arguments` is given, and on the same port if `samePort`.
    public func restart(arguments: [String]? = nil, samePort: Bool = false) async throws -> TestServer {
        if let directory {
            return try await TestServer(
                directory: directory, host: host, port: samePort ? port : 0, arguments: arguments ?? self.arguments)
        }
        return try await TestServer(
            dataDirectory: dataDirectory, host: host, port: samePort ? port : 0, arguments: arguments ?? self.arguments)
    }

    /// `127.0.0.1:PORT`, for `hkq --server`.
    public var address: String { "127.0.0.1:\(port)" }

    /// hkq's options to reach this server as the admin identity.
    public var hkqServer: [String] { ["--server", address, "--token", token] }

    /// Everything hkd wrote to standard error so far; all of it once ``stop()`` or ``kill()`` returned.
    public var logText: String { child.output.text }

    /// Whether hkd has not exited yet.
    public var isRunning: Bool { child.exitStatus == nil }

    /// How hkd ended (`exited with status 1`, `ended by signal 13`); nil while it runs.
    public var ending: String? { child.ending }

    /// hkd's process id while it runs.
    public var processIdentifier: Int32? { isRunning ? child.processIdentifier : nil }

    /// A client for this server, as the admin identity unless `token` is given.
    public func client(name: String = "integration-test", token: String? = nil) -> HealthClient {
        HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: port, token: token ?? self.token, clientName: name,
                requestTimeout: .seconds(30)))
    }

    /// Waits until hkd's log contains `text`; fails the test (throws ``WaitTimeout``) after `timeout`.
    public func waitForLog(_ text: String, timeout: Duration = .seconds(60)) async throws {
        try await waitUntil(timeout: timeout, "hkd to log \"\(text)\"; its log ends: \(logText.suffix(1000))") {
            logText.contains(text)
        }
    }

    /// SIGTERM; returns hkd's exit status once it exited and its log is complete.
    @discardableResult
    public func stop() async -> Int32 { await child.end(SIGTERM) }

    /// SIGKILL; returns once hkd is gone and its log is complete.
    public func kill() async { await child.end(SIGKILL) }

    deinit { child.killNow() }

    /// The package root: the directory above Tests/ holding Package.swift.
    public static var packageRoot: URL { TestFixtures.packageRoot }

    /// A built product of this package (`swift test` builds every product first): beside the test bundle, else
    /// in `.build/debug` under the package root.
    public static func binary(_ name: String) throws -> URL {
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

    /// The port in hkd's "listening on HOST:PORT" line.
    private static func port(in log: String, host: String) -> Int? {
        guard let range = log.range(of: "listening on \(host):") else { return nil }
        return Int(log[range.upperBound...].prefix { $0.isNumber })
    }
}

/// One child process (hkd, or the tests' nats-server): its exit status (set by Foundation's termination handler)
/// and its standard error, read to end of file by a thread of its own.
final class HKDChild: Sendable {
    let output = OutputCollector()
    /// The program's name in failure messages.
    let name: String
    private let status = ConditionLock<Int32?>(nil)
    /// Whether the exit status is the number of the signal that ended hkd.
    private let killedBySignal = ConditionLock<Bool>(false)
    private let process: Process

    init(binary: URL, arguments: [String], environment extra: [String: String] = [:], name: String = "hkd") throws {
        self.name = name
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        // hkd refuses HKD_* variables it does not know, and HKD_TEST_SEED (which replays a seeded test) is not one.
        var environment = ProcessInfo.processInfo.environment
        environment["HKD_TEST_SEED"] = nil
        // A crash prints every thread's backtrace to the log a failing test shows (the runtime's backtracer is
        // off by default here).
        environment["SWIFT_BACKTRACE"] =
            environment["SWIFT_BACKTRACE"] ?? "enable=yes,interactive=no,color=no,output-to=stderr"
        environment.merge(extra) { $1 }
        process.environment = environment
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        let status = self.status
        let killedBySignal = self.killedBySignal
        process.terminationHandler = { finished in
            killedBySignal.update { $0 = finished.terminationReason == .uncaughtSignal }
            status.update { $0 = finished.terminationStatus }
        }
        self.process = process
        try process.run()
        // Foundation closed the pipe's write end in this process: end of file comes when hkd (and nobody else)
        // holds it.
        output.read(from: pipe.fileHandleForReading)
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// The exit status once hkd exited.
    var exitStatus: Int32? { status.withLock { $0 } }

    /// How hkd ended (`exited with status 1`, `ended by signal 13`); nil while it runs.
    var ending: String? {
        exitStatus.map { killedBySignal.withLock { $0 } ? "ended by signal \($0)" : "exited with status \($0)" }
    }

    /// Sends `signal` (unless nil or hkd already exited), waits for the exit and for end of file on standard
    /// error; returns the exit status. A hkd that ignores SIGTERM for 60 s is killed, and the test fails.
    @discardableResult
    func end(_ signal: Int32?) async -> Int32 {
        if let signal, exitStatus == nil { Glibc.kill(process.processIdentifier, signal) }
        do {
            try await waitUntil(timeout: .seconds(60), "\(name) (pid \(process.processIdentifier)) to exit") {
                exitStatus != nil
            }
            try await waitUntil(timeout: .seconds(30), "\(name)'s standard error to reach end of file") { output.ended }
        } catch {
            // A stop that hangs is a failure of the test (of hkd), not something to wait out.
            Issue.record("\(error); killing \(name). Its log ends: \(output.text.suffix(1000))")
            killNow()
        }
        return exitStatus ?? -1
    }

    /// Sends `signal` unless the process already exited.
    func signal(_ signal: Int32) {
        if exitStatus == nil { Glibc.kill(process.processIdentifier, signal) }
    }

    /// SIGKILL if hkd still runs, and a blocking wait for its exit (for deinit and failed waits).
    func killNow() {
        guard exitStatus == nil else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        _ = status.wait(until: .after(.seconds(30))) { $0 }
    }

    deinit { killNow() }
}

/// Text a thread reads from a pipe until end of file, for others to look at while it comes in.
final class OutputCollector: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var ended = false
    }
    private let state = Mutex(State())

    /// Everything read so far, as UTF-8.
    var text: String { String(decoding: state.withLock { $0.bytes }, as: UTF8.self) }

    /// Whether the pipe reached end of file: ``text`` is all there will be.
    var ended: Bool { state.withLock { $0.ended } }

    /// Starts a thread that reads `handle` to end of file (blocking reads do not belong on the test pool).
    func read(from handle: FileHandle) {
        let thread = Thread { [self] in
            // read(2), not FileHandle.read(upToCount:), which waits until it has the whole count.
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes {
                    Glibc.read(handle.fileDescriptor, $0.baseAddress, $0.count)
                }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                state.withLock { $0.bytes.append(contentsOf: buffer[..<count]) }
            }
            state.withLock { $0.ended = true }
        }
        thread.name = "hkd-stderr"
        thread.start()
    }
}
