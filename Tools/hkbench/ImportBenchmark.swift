import Foundation
import HealthModel
import HealthServer

/// `hkbench import`: `hkq import` end to end on a large synthetic export.
///
/// Writes a ``SyntheticExport`` zip, starts hkd in-process on port 0 (default settings: fsync always), then runs
/// the real `hkq` binary three times as a child process: a dry run (read and parse only), the import (parse, send,
/// store, acknowledge) and the same import again (everything already stored). Reports records per second and
/// the peak resident memory of the hkq process (its `VmHWM`, polled), and checks the counts per type.
enum ImportBenchmark: BenchCommand {
    static let name = "import"
    static let abstract = "hkq import of a large synthetic Apple Health export: records/s and peak memory."
    static let options: [(flag: String, help: String)] = [
        ("--records <n>", "Records in the export, 1 in 100 a sleep record (default 1000000).")
    ]

    /// End to end records per second the import should reach (BENCHMARKS.md's goal table, for a 2 M-record export).
    static let rateGoal = 600_000.0
    /// Most memory the hkq process should need, whatever the file size.
    static let memoryGoal = 64 << 20

    static func run(_ options: ParsedOptions) throws {
        let records = try options.integer("--records", default: 1_000_000, in: 1...2_000_000)
        let hkq = try ChildProcess.sibling("hkq")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hkbench-import-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let path = directory.appendingPathComponent("export.zip").path
        let (xmlBytes, zipBytes) = try write(records: records, to: path)
        let expected = SyntheticExport.sampleCounts(records: records)
        let samples = expected.values.reduce(0, +)
        print(
            "hkbench import: \(records) records (\(samples) samples, \(expected.count) types), export.xml "
                + "\(megabytes(xmlBytes)), export.zip \(megabytes(zipBytes)); hkq as a child process, "
                + "hkd in-process (fsync always, --auth off).\n")

        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.dataDirectory = directory.appendingPathComponent("data").path
        configuration.auth = .off
        let server = try HealthServer.start(configuration)
        defer { server.stop() }
        let common = ["--server", "127.0.0.1:\(server.port)", "--subject", "bench", "--format", "json"]

        let dry = try importing(hkq, common + ["import", path, "--dry-run"], samples: samples, new: nil)
        let first = try importing(hkq, common + ["import", path], samples: samples, new: samples)
        let again = try importing(hkq, common + ["import", path], samples: samples, new: 0)
        let perType = server.store.info().samplesByType
        guard perType == expected else {
            throw HealthError(.internalError, "hkd holds \(perType), the export has \(expected)")
        }

        print("| run | records | seconds | records/s | hkq CPU s | hkd CPU s | hkq peak memory |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for (label, outcome) in [
            ("dry run (read + parse)", dry), ("import (parse + send + store + ack)", first),
            ("import again (all already stored)", again),
        ] {
            print(
                "| \(label) | \(records) | \(String(format: "%.2f", outcome.seconds)) | "
                    + "\(Int(Double(records) / outcome.seconds)) | \(String(format: "%.2f", outcome.cpuSeconds)) | "
                    + "\(String(format: "%.2f", outcome.serverCPUSeconds)) | \(megabytes(outcome.peakResidentBytes)) |")
        }
        let rate = Double(records) / first.seconds
        let peak = [dry, first, again].map(\.peakResidentBytes).max() ?? 0
        print(
            String(
                format: "\ngoal: ≥ %.0f records/s end to end: %.0f (%@)", rateGoal, rate,
                rate >= rateGoal ? "met" : "MISSED"))
        print(
            "goal: ≤ \(megabytes(memoryGoal)) peak for hkq: \(megabytes(peak)) (\(peak <= memoryGoal ? "met" : "MISSED"))"
        )
        print("checks: hkd holds exactly the export's samples per type; the second import stored nothing new")
    }

    /// Writes the synthetic export of `records` records to `path`; returns the sizes of its XML and of the zip.
    /// The XML is released before hkq runs.
    static func write(records: Int, to path: String) throws -> (xml: Int, zip: Int) {
        let xml = SyntheticExport.xml(records: records)
        let zip = SyntheticExport.zip(xml)
        try Data(zip).write(to: URL(fileURLWithPath: path))
        return (xml.count, zip.count)
    }

    /// One run of hkq, with the CPU time this process (hkd's threads, and the polling) used meanwhile.
    struct Run {
        var outcome: ChildProcess.Outcome
        var serverCPUSeconds: Double
        var seconds: Double { outcome.seconds }
        var cpuSeconds: Double { outcome.cpuSeconds }
        var peakResidentBytes: Int { outcome.peakResidentBytes }
    }

    /// Runs hkq, checks its exit status and summary, and returns the outcome.
    static func importing(_ hkq: String, _ arguments: [String], samples: Int, new: Int?) throws -> Run {
        let cpuBefore = ChildProcess.ownCPUSeconds()
        let outcome = try ChildProcess.run(hkq, arguments)
        let serverCPU = ChildProcess.ownCPUSeconds() - cpuBefore
        guard outcome.status == 0,
            let summary = try? JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any]
        else { throw HealthError(.internalError, "hkq \(arguments.joined(separator: " ")) failed: \(outcome.output)") }
        guard summary["samples"] as? Int == samples, summary["inserted"] as? Int == new else {
            throw HealthError(.internalError, "unexpected summary: \(outcome.output)")
        }
        return Run(outcome: outcome, serverCPUSeconds: serverCPU)
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / Double(1 << 20)) }
}
