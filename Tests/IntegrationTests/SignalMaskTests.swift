import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What hkd's threads do with signals: SIGPIPE is blocked in every one of them, so a peer gone mid-write (a
/// client, the NATS server, a pipe) is an EPIPE to handle, never the silent end of the process.
@Suite("hkd's signal mask")
struct SignalMaskTests {
    /// The blocked signals of each thread of process `pid` (`SigBlk` of /proc/PID/task/TID/status).
    static func blockedSignals(of pid: Int32) throws -> [String: UInt64] {
        let tasks = "/proc/\(pid)/task"
        var masks: [String: UInt64] = [:]
        for thread in try FileManager.default.contentsOfDirectory(atPath: tasks) {
            guard let status = try? String(contentsOfFile: "\(tasks)/\(thread)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
                let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
            else { continue }
            masks[thread] = mask
        }
        return masks
    }

    @Test("every thread of a serving hkd blocks SIGPIPE")
    func everyThreadBlocksBrokenPipes() async throws {
        let hkd = try await TestServer()
        let client = hkd.client()
        defer { client.close() }
        _ = try await client.serverInfo()
        let pid = try #require(hkd.processIdentifier)
        let masks = try Self.blockedSignals(of: pid)
        #expect(masks.count >= 2, "hkd runs several threads: \(masks)")
        for (thread, mask) in masks {
            #expect(mask & (1 << UInt64(SIGPIPE - 1)) != 0, "thread \(thread) does not block SIGPIPE: \(mask)")
        }
    }
}
