/// HealthKit's `HKWorkoutActivityType`: the kind of a workout, with Apple's raw values (HEALTHKIT.md §13).
///
/// Exports write the name with the `HKWorkoutActivityType` prefix and the first letter capitalised
/// (`HKWorkoutActivityTypeRunning`); hkq and the protocol use the case name (`running`) and the raw value.
/// Deprecated cases (`dance`, `danceInspiredTraining`, `mixedMetabolicCardioTraining`) stay, as in HealthKit, so
/// old exports keep their activity. Raw value 81 is unused in HealthKit too.
public enum WorkoutActivityType: UInt16, Sendable, CaseIterable {
    case americanFootball = 1
    case archery = 2
    case australianFootball = 3
    case badminton = 4
    case baseball = 5
    case basketball = 6
    case bowling = 7
    case boxing = 8
    case climbing = 9
    case cricket = 10
    case crossTraining = 11
    case curling = 12
    case cycling = 13
    case dance = 14
    case danceInspiredTraining = 15
    case elliptical = 16
    case equestrianSports = 17
    case fencing = 18
    case fishing = 19
    case functionalStrengthTraining = 20
    case golf = 21
    case gymnastics = 22
    case handball = 23
    case hiking = 24
    case hockey = 25
    case hunting = 26
    case lacrosse = 27
    case martialArts = 28
    case mindAndBody = 29
    case mixedMetabolicCardioTraining = 30
    case paddleSports = 31
    case play = 32
    case preparationAndRecovery = 33
    case racquetball = 34
    case rowing = 35
    case rugby = 36
    case running = 37
    case sailing = 38
    case skatingSports = 39
    case snowSports = 40
    case soccer = 41
    case softball = 42
    case squash = 43
    case stairClimbing = 44
    case surfingSports = 45
    case swimming = 46
    case tableTennis = 47
    case tennis = 48
    case trackAndField = 49
    case traditionalStrengthTraining = 50
    case volleyball = 51
    case walking = 52
    case waterFitness = 53
    case waterPolo = 54
    case waterSports = 55
    case wrestling = 56
    case yoga = 57
    case barre = 58
    case coreTraining = 59
    case crossCountrySkiing = 60
    case downhillSkiing = 61
    case flexibility = 62
    case highIntensityIntervalTraining = 63
    case jumpRope = 64
    case kickboxing = 65
    case pilates = 66
    case snowboarding = 67
    case stairs = 68
    case stepTraining = 69
    case wheelchairWalkPace = 70
    case wheelchairRunPace = 71
    case taiChi = 72
    case mixedCardio = 73
    case handCycling = 74
    case discSports = 75
    case fitnessGaming = 76
    case cardioDance = 77
    case socialDance = 78
    case pickleball = 79
    case cooldown = 80
    case swimBikeRun = 82
    case transition = 83
    case underwaterDiving = 84
    case other = 3000

    /// The prefix exports put before the capitalised case name.
    public static let exportPrefix = "HKWorkoutActivityType"

    /// The case name, e.g. `running` (also what interpolating an activity type prints).
    public var name: String { String(describing: self) }

    /// The name an export writes, e.g. `HKWorkoutActivityTypeRunning`.
    public var exportName: String { Self.exportPrefix + name.prefix(1).uppercased() + name.dropFirst() }

    private static let byName: [String: WorkoutActivityType] = {
        var names: [String: WorkoutActivityType] = [:]
        for type in allCases {
            names[type.name.lowercased()] = type
            names[type.exportName.lowercased()] = type
        }
        return names
    }()

    /// The activity named `text`: a case name (`running`, any case), an export name
    /// (`HKWorkoutActivityTypeRunning`) or a raw value (`"37"`); `nil` for anything else.
    public init?(named text: String) {
        if let type = Self.byName[text.lowercased()] {
            self = type
        } else if let raw = UInt16(text), let type = WorkoutActivityType(rawValue: raw) {
            self = type
        } else {
            return nil
        }
    }

    /// The activity named `text`, or ``ErrorCode/invalidArgument`` naming it and the nearest known name.
    public static func parse(_ text: String) throws -> WorkoutActivityType {
        if let type = WorkoutActivityType(named: text) { return type }
        var message = "unknown workout activity type \"\(text)\""
        if let nearest = Suggestion.nearest(to: text, among: allCases.lazy.map(\.name)) {
            message += "; did you mean \"\(nearest)\"?"
        }
        throw HealthError(.invalidArgument, message)
    }
}
