import Foundation
import HealthEngine
import HealthModel

/// `hkbench blocks`: sealed blocks (HealthEngine/Blocks) on the W1 dataset, one core: sealing speed, bytes
/// per sample, and decoding speed into one reused set of buffers.
enum BlockBenchmark: BenchCommand {
    static let name = "blocks"
    static let abstract = "Seal the W1 dataset into compressed blocks and decode them again, on one core."
    static let options: [(flag: String, help: String)] = [
        ("--rows <n>", "Rows per block (default 4096)."),
        ("--repeat <n>", "Runs of each stage; the fastest counts (default 5)."),
    ]

    /// The goals (BENCHMARKS.md): decoding tens of millions of rows a second, and at most 4 bytes a sample.
    static let decodeGoal = 20_000_000.0
    static let bytesGoal = 4.0

    static func run(_ options: ParsedOptions) throws {
        let blockRows = try options.integer("--rows", default: 4096, in: 1...SealedBlock.maxRows)
        let repeats = try options.integer("--repeat", default: 5, in: 1...100)
        print("hkbench blocks: W1 dataset, \(W1Dataset.rowCount) rows per series, \(blockRows) rows per block,")
        print("fastest of \(repeats) runs, one core.\n")
        print("series     encoded B/row  resident B/row  seal M rows/s  decode all M rows/s  decode values M/s")
        let dataset = W1Dataset()
        for series in W1Dataset.Series.allCases {
            try measure(series, values: dataset.values(series), blockRows: blockRows, repeats: repeats)
        }
    }

    private static func measure(_ series: W1Dataset.Series, values: [Double], blockRows: Int, repeats: Int) throws {
        let n = values.count
        let starts = (0..<n).map { W1Dataset.firstStart + Int64($0) * Micros.minute }
        let ends = starts.map { $0 + Micros.minute }
        let sources = [UInt16](repeating: 0, count: n)
        let arrivals = (0..<n).map { UInt64($0) + 1 }
        var blocks: [SealedBlock] = []
        let seal = Stopwatch.best(of: repeats) {
            blocks = starts.withUnsafeBufferPointer { s in
                ends.withUnsafeBufferPointer { e in
                    values.withUnsafeBufferPointer { v in
                        sources.withUnsafeBufferPointer { ids in
                            arrivals.withUnsafeBufferPointer { a in
                                stride(from: 0, to: n, by: blockRows).map { first in
                                    let r = first..<min(first + blockRows, n)
                                    return SealedBlock(
                                        encoding: BlockColumns(
                                            starts: .init(rebasing: s[r]), ends: .init(rebasing: e[r]),
                                            values: .init(rebasing: v[r]), sourceIDs: .init(rebasing: ids[r]),
                                            arrivals: .init(rebasing: a[r])))
                                }
                            }
                        }
                    }
                }
            }
        }
        let encoded = blocks.reduce(0) { $0 + $1.bytes.count }
        let resident =
            blocks.reduce(0) { $0 + $1.approximateBytes } + blocks.capacity * MemoryLayout<SealedBlock>.stride
        let scratch = BlockScratch(capacity: blockRows)
        var checksum = 0.0
        var mismatches = 0
        let all = scratch.all
        let decodeAll = Stopwatch.best(of: repeats) {
            for block in blocks { block.decode(into: all) }
        }
        var first = 0
        for block in blocks {
            block.decode(into: all)
            for i in 0..<block.count
            where scratch.starts[i] != starts[first + i] || scratch.ends[i] != ends[first + i]
                || scratch.values[i] != values[first + i]
                || scratch.arrivals[i] != arrivals[first + i]
            {
                mismatches += 1
            }
            first += block.count
        }
        let decodeValues = Stopwatch.best(of: repeats) {
            for block in blocks {
                block.decode(into: BlockBuffers(values: scratch.values))
                checksum += scratch.values[0]
            }
        }
        guard mismatches == 0 else {
            throw HealthError(.internalError, "\(mismatches) rows decoded differently from what was sealed")
        }
        print(
            series.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                + String(
                    format: " %13.3f  %14.3f  %13.1f  %19.1f  %17.1f", Double(encoded) / Double(n),
                    Double(resident) / Double(n), Double(n) / seal / 1e6, Double(n) / decodeAll / 1e6,
                    Double(n) / decodeValues / 1e6))
        let rate = Double(n) / decodeAll
        print(
            String(
                format: "  goals: decode all ≥ %.0f M rows/s: %@; resident ≤ %.0f B/row: %@ (checksum %.0f)",
                decodeGoal / 1e6, rate >= decodeGoal ? "met" : "MISSED", bytesGoal,
                Double(resident) / Double(n) <= bytesGoal ? "met" : "MISSED", checksum))
    }
}
