import Foundation
import TestSupport
import Testing

/// The hkq binary against the hkd binary: what a person at a terminal does.
@Suite("hkq against hkd", .serialized)
struct HKQBinaryTests {
    /// Runs hkq with arguments and standard input in an empty directory (not the package root, whose
    /// ./hkd-data of README's quick start hkq would read for a token); returns exit status, stdout and stderr.
    static func hkq(_ arguments: [String], input: String = "") async throws -> (status: Int32, out: String, err: String)
    {
        let outcome = try await runChild(try TestServer.binary("hkq").path, arguments, input: input)
        return (outcome.status, outcome.output, outcome.errors)
    }

    /// The global options that reach `hkd` as the subject anna.
    static func anna(at hkd: TestServer) -> [String] {
        ["--server", "127.0.0.1:\(hkd.port)", "--token", hkd.token, "--subject", "anna"]
    }

    @Test("insert from stdin, then samples and stats, in JSON")
    func insertAndQuery() async throws {
        let hkd = try await TestServer()
        let server = Self.anna(at: hkd)
        let csv = """
            type,start,end,value,unit,source
            stepCount,2024-03-10T06:00:00-05:00,2024-03-10T06:10:00-05:00,1200,count,iPhone
            stepCount,2024-03-10T06:05:00-05:00,2024-03-10T06:15:00-05:00,1100,count,Apple Watch
            heartRate,2024-03-10T06:00:00-05:00,2024-03-10T06:00:00-05:00,1.25,count/s,Apple Watch
            """
        let insert = try await Self.hkq(server + ["insert", "-"], input: csv)
        #expect(insert.status == 0, "\(insert.err)")
        #expect(insert.out.contains("inserted 3 new samples"))

        let samples = try await Self.hkq(server + ["samples", "heartRate", "--format", "json"])
        #expect(samples.status == 0, "\(samples.err)")
        let rows = try JSONSerialization.jsonObject(with: Data(samples.out.utf8)) as? [[String: Any]]
        #expect(rows?.count == 1)
        #expect((rows?.first?["value"] as? Double).map { abs($0 - 75) < 1e-9 } == true)

        let stats = try await Self.hkq(
            server + ["stats", "stepCount", "--options", "sum,by-source", "--format", "json"])
        #expect(stats.status == 0, "\(stats.err)")
        #expect(stats.out.contains("1200") && stats.out.contains("1100"))

        let none = try await Self.hkq(
            server + ["stats", "stepCount", "--from", "2020-01-01T00:00:00Z", "--to", "2020-01-02T00:00:00Z"])
        #expect(none.status == 2, "no data")
        #expect(none.err.contains("no stepCount data"))

        let bad = try await Self.hkq(
            server + ["insert", "-"],
            input: "type,start,end,value,unit,source\nstepCount,2024-03-10T06:00:00Z,2024-03-10T06:10:00Z,5,kg,iPhone\n"
        )
        #expect(bad.status == 3, "the row is rejected, named on standard error")
        #expect(bad.err.contains("kg"))
        await hkd.stop()

        let down = try await Self.hkq(server + ["--retry-for", "0", "samples", "stepCount"])
        #expect(down.status == 69, "server unreachable")
        #expect(down.err.contains("cannot connect"))
    }

    @Test("watch streams what is stored until its count, then exits (the command's task on hkq's main thread)")
    func watchUntilCount() async throws {
        let hkd = try await TestServer()
        let server = Self.anna(at: hkd)
        // Ten minutes of steps at 06:00 UTC on three days.
        let rows = [(10, 1200), (11, 800), (12, 500)].map { day, steps in
            "stepCount,2024-03-\(day)T06:00:00Z,2024-03-\(day)T06:10:00Z,\(steps),count,iPhone"
        }
        let csv = (["type,start,end,value,unit,source"] + rows).joined(separator: "\n")
        let insert = try await Self.hkq(server + ["insert", "-"], input: csv)
        #expect(insert.status == 0, "\(insert.err)")
        let samples = try await Self.hkq(server + ["watch", "stepCount", "--count", "2", "--tz", "UTC"])
        #expect(samples.status == 0, "\(samples.err)")
        #expect(samples.out.split(separator: "\n").filter { $0.hasPrefix("+ ") }.count == 2, "\(samples.out)")
        let buckets = try await Self.hkq(
            server + ["watch", "stepCount", "--collection", "--count", "3", "--tz", "UTC"])
        #expect(buckets.status == 0, "\(buckets.err)")
        #expect(
            buckets.out.split(separator: "\n") == [
                "2024-03-10 1200 count", "2024-03-11 800 count", "2024-03-12 500 count",
            ],
            "\(buckets.out)")
        await hkd.stop()
    }
}
