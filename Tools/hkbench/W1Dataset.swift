import HealthModel

/// The dataset of docs/PEERS.md that every workload (W1 ingest, W2, W3) and the codec benchmark share.
///
/// One subject, one sample per minute from 2020-01-01T00:00Z for 2,629,800 minutes (5 × 365.25 days), each
/// lasting one minute, for two types:
/// - `stepCount` (count): 0 at night (23:00–07:00 at UTC−5, the subject's standard time), and in waking minutes
///   1–129 steps with probability 0.15, else 0;
/// - `heartRate` (count/min): integer bpm, a bounded random walk in 48–68 at night and 58–125 by day.
///
/// Deterministic: the values depend only on the seed, never on how the rows are cut into batches.
struct W1Dataset: Sendable {
    /// The quantity types the dataset holds.
    enum Series: String, CaseIterable, Sendable {
        case stepCount, heartRate

        var unit: String { self == .stepCount ? "count" : "count/min" }
    }

    /// 2020-01-01T00:00:00Z.
    static let firstStart: Timestamp = 1_577_836_800 * Micros.second
    /// Minutes in five years of 365.25 days.
    static let rowCount = 2_629_800
    /// Rows per batch, as W1 sends them.
    static let batchRows = 10_000
    /// The one source that wrote every sample.
    static let source = SourceInfo(
        name: "W1 Watch", bundleIdentifier: "com.example.w1", version: "10.4", device: "Watch6,2")

    var subject = "w1-subject"
    var seed: UInt64 = 2020

    /// Whether the minute starting at `start` is at night (23:00–07:00 at UTC−5).
    static func isNight(_ start: Timestamp) -> Bool {
        let minuteOfDay = ((start / Micros.minute - 5 * 60) % 1440 + 1440) % 1440
        return minuteOfDay >= 23 * 60 || minuteOfDay < 7 * 60
    }

    /// Every value of `series`, one per minute.
    func values(_ series: Series) -> [Double] {
        var random = SplitMix64(seed: seed ^ (series == .stepCount ? 0x5732_5354_4550 : 0x5732_4852))
        var values: [Double] = []
        values.reserveCapacity(Self.rowCount)
        var bpm = 60
        for row in 0..<Self.rowCount {
            let night = Self.isNight(Self.firstStart + Int64(row) * Micros.minute)
            switch series {
            case .stepCount:
                let walking = !night && random.next() % 100 < 15
                values.append(walking ? Double(1 + random.next() % 129) : 0)
            case .heartRate:
                let range = night ? 48...68 : 58...125
                bpm = min(max(bpm + Int(random.next() % 5) - 2, range.lowerBound), range.upperBound)
                values.append(Double(bpm))
            }
        }
        return values
    }

    /// The whole series as batches of ``batchRows`` rows (the last one shorter), with batch ids from 1 up.
    func batches(_ series: Series) -> [SampleBatch] {
        let values = values(series)
        return stride(from: 0, to: Self.rowCount, by: Self.batchRows).enumerated().map { number, first in
            let rows = first..<min(first + Self.batchRows, Self.rowCount)
            let starts = rows.map { Self.firstStart + Int64($0) * Micros.minute }
            return SampleBatch(
                batchID: UInt64(number + 1), subject: subject, typeIdentifier: series.rawValue, unit: series.unit,
                sources: [Self.source], starts: starts, ends: starts.map { $0 + Micros.minute },
                values: Array(values[rows]), sourceIndices: Array(repeating: 0, count: rows.count))
        }
    }
}
