import Foundation
import HealthCodec
import HealthModel

/// `hkbench codec`: the sample-batch codec and zlib on the W1 dataset, one core.
enum CodecBenchmark: BenchCommand {
    static let name = "codec"
    static let abstract = "Encode, deflate, inflate and decode the W1 dataset's batches on one core."
    static let options: [(flag: String, help: String)] = [
        ("--level <n>", "zlib level, 0-9 (default 1)."),
        ("--repeat <n>", "Runs of each stage; the fastest counts (default 3)."),
    ]

    /// The codec's goals (docs/benchmarks-history.md, "Codec"): decode speed per core, and W1 stepCount size on
    /// the wire.
    static let decodeGoal = 10_000_000.0
    static let wireGoal = 2.0

    /// What one series measured.
    struct Figures {
        var series: W1Dataset.Series
        var rows: Int
        var payloadBytes: Int
        var wireBytes: Int
        var encode, deflate, inflate, decode: Double

        func rate(_ seconds: Double) -> String { String(format: "%.1f M/s", Double(rows) / seconds / 1e6) }
        func perSample(_ bytes: Int) -> String { String(format: "%.3f", Double(bytes) / Double(rows)) }
    }

    static func run(_ options: ParsedOptions) throws {
        let level = try options.integer("--level", default: 1, in: 0...9)
        let repeats = try options.integer("--repeat", default: 3, in: 1...100)
        let dataset = W1Dataset()
        print("hkbench codec: W1 dataset, \(W1Dataset.rowCount) rows per series in batches of \(W1Dataset.batchRows),")
        print("zlib level \(level), fastest of \(repeats) runs, one core.\n")
        var all: [Figures] = []
        for series in W1Dataset.Series.allCases {
            all.append(try measure(dataset.batches(series), series: series, level: level, repeats: repeats))
        }
        print(table(all))
        let steps = all.first { $0.series == .stepCount }!
        let decodeRate = Double(steps.rows) / steps.decode
        let wire = Double(steps.wireBytes) / Double(steps.rows)
        print(
            String(
                format: "\ngoal: decode ≥ %.0f M samples/s: %.1f M/s (%@)", decodeGoal / 1e6, decodeRate / 1e6,
                decodeRate >= decodeGoal ? "met" : "MISSED"))
        print(
            String(
                format: "goal: stepCount ≤ %.1f bytes/sample on the wire: %.3f (%@)", wireGoal, wire,
                wire <= wireGoal ? "met" : "MISSED"))
    }

    /// Times each stage over all batches of one series, and checks that what comes back equals what went in.
    static func measure(_ batches: [SampleBatch], series: W1Dataset.Series, level: Int, repeats: Int) throws -> Figures
    {
        let rows = batches.reduce(0) { $0 + $1.count }
        var payloads: [[UInt8]] = []
        let encode = try Stopwatch.best(of: repeats) {
            payloads = try batches.map { try SampleBatchCodec.encode($0) }
        }
        var frames: [[UInt8]] = []
        let deflater = Deflater(level: level)
        let deflate = Stopwatch.best(of: repeats) {
            frames = payloads.map { deflater.deflate($0) }
        }
        var inflated: [[UInt8]] = []
        let inflate = try Stopwatch.best(of: repeats) {
            inflated = try frames.map { try Zlib.inflate($0, maxOutput: 16 << 20) }
        }
        var decoded: [SampleBatch] = []
        let decode = try Stopwatch.best(of: repeats) {
            decoded = try inflated.map { try SampleBatchCodec.decode($0) }
        }
        guard decoded == batches else { throw CodecBenchmarkError.mismatch(series.rawValue) }
        return Figures(
            series: series, rows: rows, payloadBytes: payloads.reduce(0) { $0 + $1.count },
            wireBytes: frames.reduce(0) { $0 + $1.count }, encode: encode, deflate: deflate, inflate: inflate,
            decode: decode)
    }

    /// The figures as a Markdown table, one column per series.
    static func table(_ all: [Figures]) -> String {
        var lines = ["| | " + all.map { "`\($0.series.rawValue)`" }.joined(separator: " | ") + " |"]
        lines.append("|---|" + all.map { _ in "---:|" }.joined())
        func row(_ label: String, _ cell: (Figures) -> String) {
            lines.append("| \(label) | " + all.map(cell).joined(separator: " | ") + " |")
        }
        row("rows") { "\($0.rows)" }
        row("payload bytes/sample (uncompressed)") { $0.perSample($0.payloadBytes) }
        row("**wire bytes/sample (after zlib)**") { "**\($0.perSample($0.wireBytes))**" }
        row("compression ratio") { String(format: "%.1f×", Double($0.payloadBytes) / Double($0.wireBytes)) }
        row("encode (samples/s)") { $0.rate($0.encode) }
        row("deflate alone") { $0.rate($0.deflate) }
        row("encode + deflate") { $0.rate($0.encode + $0.deflate) }
        row("inflate alone") { $0.rate($0.inflate) }
        row("**decode (samples/s)**") { "**\($0.rate($0.decode))**" }
        row("inflate + decode") { $0.rate($0.inflate + $0.decode) }
        return lines.joined(separator: "\n")
    }
}

/// The codec benchmark found that decoding did not give back the encoded batches.
enum CodecBenchmarkError: Error, CustomStringConvertible {
    case mismatch(String)

    var description: String {
        switch self {
        case .mismatch(let series): "decoded \(series) batches differ from the encoded ones"
        }
    }
}
