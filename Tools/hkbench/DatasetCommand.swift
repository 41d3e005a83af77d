import Foundation
import HealthModel

/// `hkbench dataset`: the W1 dataset as CSV, so the peers (Tools/peers) load exactly the rows hkbench sends.
enum DatasetCommand: BenchCommand {
    static let name = "dataset"
    static let abstract = "Write the W1 dataset as CSV: start (Unix seconds), stepCount, heartRate; one row a minute."
    static let options: [(flag: String, help: String)] = [
        ("--out <file>", "Where to write the CSV (required).")
    ]

    static func run(_ options: ParsedOptions) throws {
        guard let path = options.string("--out") else { throw UsageError(message: "--out <file> is required") }
        let dataset = W1Dataset()
        let steps = dataset.values(.stepCount)
        let heart = dataset.values(.heartRate)
        var text = "start,stepCount,heartRate\n"
        text.reserveCapacity(W1Dataset.rowCount * 24)
        let firstSecond = W1Dataset.firstStart / Micros.second
        for row in 0..<W1Dataset.rowCount {
            text += "\(firstSecond + Int64(row) * 60),\(Int(steps[row])),\(Int(heart[row]))\n"
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        print("hkbench dataset: wrote \(W1Dataset.rowCount) rows to \(path)")
    }
}
