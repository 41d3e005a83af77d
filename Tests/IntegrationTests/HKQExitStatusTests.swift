import Foundation
import Synchronization
import TestSupport
import Testing

/// hkq's exit statuses, one per outcome a script tells apart (Tools/HKQKit ExitStatus), and its retries across a
/// restart of hkd, through the real binaries.
@Suite("hkq exit statuses and retries", .serialized)
struct HKQExitStatusTests {
    static func hkq(_ arguments: [String], input: String = "") async throws -> (status: Int32, out: String, err: String)
    {
        try await HKQBinaryTests.hkq(arguments, input: input)
    }

    static let header = "type,start,end,value,unit,source\n"

    /// Where a running hkq's standard error goes, once it started.
    final class ErrorsFile: Sendable {
        let path = Mutex<String?>(nil)
    }

    @Test("no data 2, partial import 3, usage 64, bad input 65, authentication or authorization refused 77")
    func statusesAgainstARunningServer() async throws {
        let hkd = try await TestServer()
        let anna = HKQBinaryTests.anna(at: hkd)
        let stored = try await Self.hkq(
            anna + ["insert", "-"], input: Self.header + "stepCount,2024-03-10T06:00:00Z,,12,count,iPhone\n")
        #expect(stored.status == 0, "\(stored.err)")

        let none = try await Self.hkq(anna + ["stats", "stepCount", "--from", "2020-01-01", "--to", "2020-01-02"])
        #expect(none.status == 2 && none.err.contains("no stepCount data"), "\(none.err)")

        let partial = try await Self.hkq(
            anna + ["insert", "-"], input: Self.header + "stepCount,2024-03-10T07:00:00Z,,-5,count,iPhone\n")
        #expect(partial.status == 3, "\(partial.err)")

        let usage = try await Self.hkq(anna + ["stats"])
        #expect(usage.status == 64 && usage.err.contains("Usage:"), "\(usage.err)")

        let unparsable = try await Self.hkq(anna + ["insert", "-"], input: "no,header,here\n1,2,3\n")
        #expect(unparsable.status == 65, "a file that does not parse: \(unparsable.err)")
        let unknownType = try await Self.hkq(anna + ["samples", "stepCont"])
        #expect(unknownType.status == 65, "a type nobody knows: \(unknownType.err)")

        var wrong = hkd.token
        let last = wrong.removeLast()
        wrong.append(last == "0" ? "1" : "0")
        let unauthenticated = try await Self.hkq(
            ["--server", hkd.address, "--token", wrong, "--subject", "anna", "samples", "stepCount"])
        #expect(unauthenticated.status == 77, "\(unauthenticated.err)")
        let created = try await Self.hkq(
            anna + ["admin", "create", "reader", "--subjects", "anna", "--read", "stepCount"])
        let token = created.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(created.status == 0 && !token.isEmpty, "\(created.err)")
        let reader = ["--server", hkd.address, "--token", token, "--subject", "anna"]
        let forbidden = try await Self.hkq(
            reader + ["insert", "-"], input: Self.header + "stepCount,2024-03-10T08:00:00Z,,1,count,iPhone\n")
        #expect(forbidden.status == 77, "no share grant for stepCount: \(forbidden.err)")
        let forbiddenStats = try await Self.hkq(reader + ["--subject", "ben", "stats", "stepCount"])
        #expect(forbiddenStats.status == 77, "ben is not a subject of reader: \(forbiddenStats.err)")
        #expect(try await Self.hkq(anna + ["admin", "revoke", "reader"]).status == 0)
        let revoked = try await Self.hkq(reader + ["samples", "stepCount"])
        #expect(revoked.status == 77 && revoked.err.contains("revoked"), "\(revoked.err)")
        await hkd.stop()
    }

    @Test("a server that is not there: one line saying hkq waits, then 69 once --retry-for is spent")
    func unreachableServer() async throws {
        let hkd = try await TestServer()
        await hkd.stop()
        let started = ContinuousClock.now
        let down = try await Self.hkq(HKQBinaryTests.anna(at: hkd) + ["--retry-for", "1", "samples", "stepCount"])
        let elapsed = ContinuousClock.now - started
        #expect(down.status == 69, "\(down.err)")
        let lines = down.err.split(separator: "\n")
        #expect(lines.first == "waiting for hkd at \(hkd.address) (retrying for up to 1 s)\u{2026}", "\(down.err)")
        #expect(lines.count == 2 && lines.last?.hasPrefix("error: cannot connect to \(hkd.address)") == true)
        #expect(elapsed >= .seconds(1), "gave up after \(elapsed)")
        let fromEnvironment = try await runChild(
            try TestServer.binary("hkq").path, HKQBinaryTests.anna(at: hkd) + ["server-info"],
            environment: ["HKQ_RETRY_FOR": "0"])
        #expect(fromEnvironment.status == 69 && !fromEnvironment.errors.contains("waiting for hkd"))
        let bad = try await Self.hkq(["--retry-for", "soon", "server-info"])
        #expect(bad.status == 64 && bad.err.contains("--retry-for"), "\(bad.err)")
    }

    @Test("hkq started while hkd is down answers once hkd is back on its port and data directory")
    func hkqOutlastsARestart() async throws {
        let first = try await TestServer()
        let anna = HKQBinaryTests.anna(at: first)
        let insert = try await Self.hkq(
            anna + ["insert", "-"], input: Self.header + "stepCount,2024-03-10T06:00:00Z,,1234,count,iPhone\n")
        #expect(insert.status == 0, "\(insert.err)")
        #expect(await first.stop() == 0)
        let errorsFile = ErrorsFile()
        let query = Task {
            try await runChild(
                try TestServer.binary("hkq").path, anna + ["samples", "stepCount", "--format", "csv"],
                started: { path in errorsFile.path.withLock { $0 = path } })
        }
        try await waitUntil("hkq to say it waits for hkd") {
            guard let path = errorsFile.path.withLock({ $0 }) else { return false }
            return (try? String(contentsOfFile: path, encoding: .utf8))?.contains("waiting for hkd") == true
        }
        let second = try await first.restart(samePort: true)
        let answered = try await query.value
        #expect(answered.status == 0, "\(answered.errors)")
        #expect(answered.output.contains("1234"), "\(answered.output)")
        #expect(
            answered.errors == "waiting for hkd at \(first.address) (retrying for up to 30 s)\u{2026}\n",
            "\(answered.errors)")
        await second.stop()
    }

    @Test("hkq --help and the man page list every exit status")
    func statusesAreDocumented() async throws {
        let help = try await Self.hkq(["--help"])
        #expect(help.status == 0)
        let man = try await Self.hkq(["help", "--man"])
        #expect(man.status == 0)
        for status in [0, 1, 2, 3, 64, 65, 69, 77] {
            #expect(
                help.out.split(separator: "\n").contains { $0.hasPrefix("  \(status) ") }, "\(status) is not in --help")
            #expect(man.out.contains(".B \(status)\n"), "\(status) is not in the man page")
        }
        #expect(help.out.contains("EXIT STATUS:") && man.out.contains(".SH EXIT STATUS"))
    }
}
