import HealthModel

@testable import HealthEngine

/// Contiguous samples of `minutes` minutes each from `from` up to `to`, each worth one step a minute, so any
/// stretch of time they cover sums to its length in minutes.
func stepsPerMinute(from: Timestamp, to: Timestamp, minutes: Int64 = 15, source: SourceInfo = phone) -> [Row] {
    stride(from: from, to: to, by: Int(minutes * Micros.minute)).map { (start: Timestamp) -> Row in
        let end = min(start + minutes * Micros.minute, to)
        let steps = Double(end - start) / Double(Micros.minute)
        return Row(start, end, steps, source)
    }
}

extension HealthStore {
    /// Daily (or other) step sums of subject "anna", as (start, end, sum) triples.
    func stepCollection(
        interval: CalendarInterval = .init(1, .day), anchor: Timestamp, zone: String,
        options: StatisticsOptions = .cumulativeSum, filter: SampleFilter = .all, from: Timestamp? = nil,
        to: Timestamp? = nil, type: String = "stepCount"
    ) throws -> [Statistics] {
        try collection(
            subject: "anna", type: try QuantityType.named(type), filter: filter, options: options, anchor: anchor,
            interval: interval,
            timeZone: zone, enumerateFrom: from, enumerateTo: to)
    }
}
