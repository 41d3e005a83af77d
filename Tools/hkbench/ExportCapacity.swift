import Foundation
import HealthClient
import HealthModel
import HealthWire

/// `hkbench capacity --export FILE`: what an Apple Health export costs once imported.
///
/// Starts the real hkd (a child process, fresh data directory, default settings), notes its resident memory
/// empty, runs the real `hkq import FILE`, stops hkd cleanly and starts it again, three times with default
/// settings and three times with `--memory-limit` (start-up then maps the snapshot files and leaves the blocks and element extras
/// there). Reports per stored sample, for each: hkd's resident growth over the empty process, the data
/// directory's bytes, the export's own zip per record, and the store's memory by structure (server-info's
/// `storeMemory`), so a miss names the structure behind it.
enum ExportCapacity {
    /// The figures of the restarts with one set of settings.
    struct Restart {
        var settings: String
        /// Resident growth over the empty hkd, one per restart (the allocator's and the kernel's timing vary).
        var resident: [Int]
        var parts: [(name: String, bytes: Int)]
    }

    /// Restarts with each set of settings.
    static let restarts = 3

    /// Measures `export` (a zip or an export.xml) and prints the tables; `memoryLimit` is hkd's `--memory-limit`
    /// for the second restart.
    static func run(export: String, memoryLimit: String) throws {
        let hkdPath = try ChildProcess.sibling("hkd")
        let hkq = try ChildProcess.sibling("hkq")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hkbench-export-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let arguments = ["--data-dir", directory, "--auth", "off"]

        let empty = try RunningHKD(path: hkdPath, arguments: arguments)
        let emptyResident = try settledResident(empty)
        let outcome = try ChildProcess.run(
            hkq, ["--server", "127.0.0.1:\(empty.port)", "--subject", "capacity", "--format", "json", "import", export])
        empty.stop()
        guard outcome.status == 0 || outcome.status == 3,
            let summary = try? JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: Any]
        else { throw HealthError(.internalError, "hkq import \(export) failed: \(outcome.output)") }
        let records = summary["recordsSeen"] as? Int ?? 0

        var samples = 0
        var restarts: [Restart] = []
        for (settings, extra) in [("default", []), ("--memory-limit \(memoryLimit)", ["--memory-limit", memoryLimit])] {
            var restart = Restart(settings: settings, resident: [], parts: [])
            for _ in 0..<Self.restarts {
                let restarted = try RunningHKD(path: hkdPath, arguments: arguments + extra)
                defer { restarted.stop() }
                restart.resident.append(try settledResident(restarted) - emptyResident)
                let client = HealthClient(
                    ClientConfiguration(
                        host: "127.0.0.1", port: restarted.port, clientName: "hkbench capacity", retry: .none))
                defer { client.close() }
                let info = try AsyncBridge.wait { try await client.serverInfo() }
                samples = Int(info.samplesPerType.reduce(UInt64(0)) { $0 + $1.samples })
                restart.parts = info.memoryParts.map { ($0.name, Int($0.bytes)) }
            }
            restarts.append(restart)
        }
        let disk = CapacityBenchmark.diskUsage(directory)
        let exportBytes = ExportCapacity.fileBytes(export)

        func perSample(_ bytes: Int) -> String { String(format: "%.2f", Double(bytes) / Double(max(samples, 1))) }
        func range(_ bytes: [Int]) -> String {
            let (low, high) = (bytes.min() ?? 0, bytes.max() ?? 0)
            return low == high ? perSample(low) : perSample(low) + "–" + perSample(high)
        }
        print("hkbench capacity --export \(export): \(records) records, \(samples) samples stored\n")
        print("| hkd | samples | resident B/sample | on disk B/sample | the export's file B/record |")
        print("|---|---:|---:|---:|---:|")
        for restart in restarts {
            print(
                "| \(restart.settings) | \(samples) | \(range(restart.resident)) | \(perSample(disk)) | "
                    + String(format: "%.2f", Double(exportBytes) / Double(max(records, 1))) + " |")
        }
        print(
            "\nresident: hkd's RSS after a restart less an empty hkd's (\(CapacityBenchmark.mib(emptyResident))), "
                + "lowest–highest of \(Self.restarts) restarts; on "
                + "disk: the data directory's bytes. The store's memory by structure (heap bytes per sample; cold "
                + "blocks and extras are in mapped files, not here):\n")
        print("| store part | " + restarts.map(\.settings).joined(separator: " | ") + " |")
        print("|---|" + restarts.map { _ in "---:|" }.joined())
        for (index, part) in (restarts.first?.parts ?? []).enumerated() {
            print(
                "| \(part.name) | " + restarts.map { perSample($0.parts[index].bytes) }.joined(separator: " | ") + " |")
        }
        let totals = restarts.map { $0.parts.reduce(0) { $0 + $1.bytes } }
        print("| all parts | " + totals.map(perSample).joined(separator: " | ") + " |")
        print(
            "| the rest of the growth (allocator slack, caches, thread stacks, mapped pages read) | "
                + zip(restarts, totals).map { restart, total in range(restart.resident.map { $0 - total }) }
                .joined(separator: " | ") + " |")
    }

    /// The server's resident bytes once it answers and has settled (two readings a second apart agree within
    /// 64 KiB, or ten seconds passed): start-up frees what it read.
    static func settledResident(_ hkd: RunningHKD) throws -> Int {
        var last = hkd.residentBytes
        for _ in 0..<10 {
            Thread.sleep(forTimeInterval: 1)
            let now = hkd.residentBytes
            if abs(now - last) < 64 << 10 { return now }
            last = now
        }
        return last
    }

    /// The size of the file at `path` (0 when it cannot be read).
    static func fileBytes(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }
}
