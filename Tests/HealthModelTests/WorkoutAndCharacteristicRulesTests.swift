import HealthModel
import Testing

/// The rules a workout's duration and a person's characteristics are checked by (HEALTHKIT.md §13), wherever they
/// come from: the importer, hkq or a client's request.
@Suite("Workout and characteristic rules")
struct WorkoutAndCharacteristicRulesTests {
    static let start: Timestamp = 1_700_000_000_000_000
    /// The longest duration a workout may have: the span of the supported instants (years 0001–9999).
    static let longest = SupportedInstants.range.upperBound - SupportedInstants.range.lowerBound

    static func workout(minutes: Int64, duration: Int64) -> Workout {
        Workout(
            activityType: .running, start: start, end: start + minutes * Micros.minute, duration: duration,
            source: SourceInfo(name: "Watch"))
    }

    @Test("a workout's duration is kept as given, whatever its interval; only a negative or endless one is refused")
    func durationWhateverTheInterval() throws {
        // Garmin writes a duration a second longer than end − start; a workout app may write any other.
        for duration in [0, 29 * Micros.minute, 30 * Micros.minute + Micros.second, 2 * Micros.hour] {
            #expect(throws: Never.self, "\(duration)") { try Self.workout(minutes: 30, duration: duration).validate() }
        }
        #expect(throws: Never.self) { try Self.workout(minutes: 0, duration: Micros.hour).validate() }
        #expect(throws: Never.self) {
            try Self.workout(minutes: 30, duration: Self.longest).validate()
        }
        for duration in [-1, Self.longest + 1, .max] {
            do {
                try Self.workout(minutes: 30, duration: duration).validate()
                Issue.record("accepted the duration \(duration)")
            } catch let error as HealthError {
                #expect(error.code.rawValue == ErrorCode.invalidSample.rawValue)
                #expect(error.message.contains("duration"), "\(error.message)")
            }
        }
    }
}
