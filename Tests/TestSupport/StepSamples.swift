import HealthModel

/// Step samples one a minute, the stock data of the end-to-end and protocol tests.
public enum StepSamples {
    public static let t0: Timestamp = 1_704_067_200_000_000  // 2024-01-01T00:00:00Z
    public static let watch = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch")

    /// `minutes` step samples of `subject`, one a minute from `offset` minutes after t0, minute m counting m % 10.
    public static func steps(subject: String, minutes: Int, source: SourceInfo = watch, offset: Int = 0) throws
        -> [Sample]
    {
        let type = try QuantityType.named("stepCount")
        let unit = try HealthUnit(parsing: "count")
        return (0..<minutes).map { minute in
            let start = t0 + Int64(minute + offset) * Micros.minute
            return Sample(
                subject: subject, type: type, start: start, end: start + Micros.minute, value: Double(minute % 10),
                unit: unit, source: source)
        }
    }
}
