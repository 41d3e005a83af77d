import Foundation
import HKQKit
import HealthModel
import HealthServer
import Testing

/// A real hkd, in-process on a free port with a temporary data directory, for one suite.
///
/// Put `.liveServer` on a `.serialized` suite: the server starts before the suite's first test and stops after
/// its last; tests reach it through ``LiveServer/current``.
final class LiveServer: Sendable {
    /// The server of the suite running now.
    @TaskLocal static var current: LiveServer?

    let server: HealthServer
    let directory: URL

    /// Starts a server on port 0 in a fresh temporary directory.
    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("hkq-live-\(UUID().uuidString)")
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        configuration.workers = 1
        configuration.dataDirectory = directory.appendingPathComponent("data").path
        server = try HealthServer.start(configuration)
        let tokenPath = configuration.dataDirectory + "/admin.token"
        token = try String(contentsOfFile: tokenPath, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The admin token the server wrote at its start.
    let token: String

    /// `127.0.0.1:PORT`.
    var address: String { "127.0.0.1:\(server.port)" }

    /// Stops the server and removes its directory.
    func shutdown() {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes `text` to a new file named `name` in the server's temporary directory and returns its path.
    func file(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent("\(UUID().uuidString)-\(name)")
        try Data(text.utf8).write(to: url)
        return url.path
    }
}

/// Starts a ``LiveServer`` around a suite.
struct LiveServerTrait: SuiteTrait, TestScoping {
    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let live = try LiveServer()
        defer { live.shutdown() }
        try await LiveServer.$current.withValue(live) { try await function() }
    }
}

extension Trait where Self == LiveServerTrait {
    /// A real hkd for the suite (see ``LiveServer``).
    static var liveServer: LiveServerTrait { LiveServerTrait() }
}

/// 2024-03-10T15:00:00Z: the "now" of data-command tests.
let fixedNow: Timestamp = CivilTime(year: 2024, month: 3, day: 10, hour: 15).timestamp(offsetSeconds: 0)

/// hkq with the clock fixed at ``fixedNow``.
let fixedClockProgram = HKQ(commands: HKQ.commands, clock: { fixedNow })

/// Runs hkq against the suite's live server as `subject`, with the clock at ``fixedNow``.
func runLive(_ arguments: [String], subject: String) async throws -> RunResult {
    let live = try #require(LiveServer.current)
    return await runHKQ(
        ["--server", live.address, "--token", live.token, "--subject", subject] + arguments, program: fixedClockProgram)
}

/// Parses JSON output, failing the test when it is not JSON of type `T`.
func json<T>(_ text: String, as type: T.Type = T.self) throws -> T {
    let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    return try #require(parsed as? T, "not \(T.self): \(text)")
}
