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

    /// The message of the error `set` throws for `value`, or `nil` when it takes the value.
    static func refusal(_ key: CharacteristicKey, _ value: String) -> String? {
        var characteristics = Characteristics()
        do {
            try characteristics.set(key, value)
            return nil
        } catch let error as HealthError {
            #expect(error.code.rawValue == ErrorCode.invalidArgument.rawValue)
            #expect(characteristics.isEmpty)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test(
        "a date of birth must be a day of the calendar in years 0001–9999",
        arguments: ["2023-02-29", "1900-02-29", "2024-04-31", "2024-06-31", "0000-01-01", "0000-02-29"])
    func impossibleDates(_ value: String) throws {
        let message = try #require(Self.refusal(.dateOfBirth, value), "accepted \(value)")
        #expect(message.contains("dateOfBirth \"\(value)\""), "\(message)")
        #expect(message.contains("years 0001–9999"), "\(message)")
    }

    @Test("real days are taken: leap days, the first and the last supported")
    func realDates() throws {
        for value in ["2024-02-29", "2000-02-29", "0001-01-01", "9999-12-31", "1984-05-01"] {
            #expect(Self.refusal(.dateOfBirth, value) == nil, "\(value)")
        }
    }

    @Test(
        "an enumerated characteristic takes only HealthKit's values, named in the refusal",
        arguments: [
            (CharacteristicKey.fitzpatrickSkinType, "banana", "I, II, III, IV, V, VI"),
            (.fitzpatrickSkinType, "HKFitzpatrickSkinTypeVII", "I, II, III, IV, V, VI"),
            (.biologicalSex, "HKBiologicalSexUnknown", "female, male, other"),
            (.bloodType, "HKBloodTypeCPositive", "aPositive, aNegative"),
            (.wheelchairUse, "maybe", "no, yes"),
            (.activityMoveMode, "HKActivityMoveModeSteps", "activeEnergy, appleMoveTime"),
            (.cardioFitnessMedicationsUse, "aspirin", "none, calciumChannelBlocker, betaBlocker"),
        ])
    func impossibleValues(_ key: CharacteristicKey, _ value: String, _ listed: String) throws {
        let message = try #require(Self.refusal(key, value), "accepted \(key)=\(value)")
        #expect(message.contains("\(key.rawValue) \"\(value)\""), "\(message)")
        #expect(message.contains(listed), "\(message)")
    }

    @Test("every HealthKit value is taken, in short and export form; empty and NotSet clear")
    func everyKnownValue() throws {
        for key in CharacteristicKey.allCases {
            for value in key.knownValues ?? [] {
                var characteristics = Characteristics()
                try characteristics.set(key, value)
                #expect(characteristics[key] == value)
                let exportForm = key.valuePrefix! + value.prefix(1).uppercased() + value.dropFirst()
                try characteristics.set(key, exportForm.replacingOccurrences(of: "Ab", with: "AB"))
                #expect(characteristics[key] == value, "\(exportForm)")
                try characteristics.set(key, key.valuePrefix! + "NotSet")
                #expect(characteristics[key] == nil)
            }
        }
    }
}
