import Foundation
import HKQKit
import HealthModel
import TestSupport
import Testing

/// A real hkd (TestSupport's ``TestServer``, one thread and one worker) on a free port, and a temporary
/// directory for the files tests write, for one suite.
///
/// Put `.liveServer` on a `.serialized` suite: the server starts before the suite's first test and stops after
/// its last; tests reach it through ``LiveServer/current``.
final class LiveServer: Sendable {
    /// The server of the suite running now.
    @TaskLocal static var current: LiveServer?

    let server: TestServer
    /// The suite's scratch directory; hkd's data directory is its `data` subdirectory.
    let scratch: TestDirectory

    /// The scratch directory's URL.
    var directory: URL { URL(fileURLWithPath: scratch.path) }

    /// Starts hkd on port 0 in a fresh temporary directory.
    init() async throws {
        scratch = try TestDirectory(prefix: "hkq-live")
        server = try await TestServer(
            dataDirectory: scratch.appending("data"), arguments: ["--threads", "1", "--workers", "1"])
    }

    /// The admin token the server wrote at its start.
    var token: String { server.token }

    /// `127.0.0.1:PORT`.
    var address: String { server.address }

    /// Stops the server; the directory goes with the last reference to it.
    func shutdown() async {
        let status = await server.stop()
        #expect(status == 0, "hkd exited with \(status): \(server.logText.suffix(2000))")
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
        let live = try await LiveServer()
        do {
            try await LiveServer.$current.withValue(live) { try await function() }
        } catch {
            await live.shutdown()
            throw error
        }
        await live.shutdown()
    }
}

extension Trait where Self == LiveServerTrait {
    /// A real hkd for the suite (see ``LiveServer``).
    static var liveServer: LiveServerTrait { LiveServerTrait() }
}

/// 2024-03-10T15:00:00Z: the "now" of data-command tests.
let fixedNow: Timestamp = CivilTime(year: 2024, month: 3, day: 10, hour: 15).timestamp(offsetSeconds: 0)

/// hkq with the clock fixed at ``fixedNow``.
let fixedClockProgram = HKQ(commands: HKQ.commands, clock: { fixedNow }, localTokenPath: noLocalTokenPath)

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
