import Foundation

/// The workout type for grants and the log: HealthKit's `HKWorkoutTypeIdentifier` (HEALTHKIT.md §13). Workouts
/// are not quantity types; they have a store, log records and a snapshot file of their own (Protocol/STORAGE.md).
public enum WorkoutType {
    /// The short identifier grants, log records and the manifest use.
    public static let identifier = "workout"
    /// HealthKit's identifier, accepted wherever ``identifier`` is.
    public static let fullIdentifier = "HKWorkoutTypeIdentifier"

    /// Whether `name` names the workout type (either identifier, any case).
    public static func matches(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered == identifier || lowered == fullIdentifier.lowercased() || lowered == "workouts"
    }
}

/// A total of a workout (energy burned, distance) as written: a value and its unit's symbol (`kcal`, `km`).
public struct WorkoutTotal: Hashable, Sendable {
    public var value: Double
    /// A unit symbol ``HealthUnit`` parses.
    public var unit: String

    /// A total from its parts.
    public init(value: Double, unit: String) {
        self.value = value
        self.unit = unit
    }

    /// The unit energy totals are summed in.
    // swift-format-ignore: NeverUseForceTry
    public static let energyUnit = try! HealthUnit(parsing: "kcal")
    /// The unit distance totals are summed in.
    // swift-format-ignore: NeverUseForceTry
    public static let distanceUnit = try! HealthUnit(parsing: "m")

    /// The value in `target` (`kcal`, `m`), `nil` when the unit does not parse or does not measure the same thing.
    public func value(in target: HealthUnit) -> Double? {
        guard let unit = try? HealthUnit(parsing: unit) else { return nil }
        return try? unit.convert(value, to: target)
    }
}

/// One event of a workout: HealthKit's `HKWorkoutEvent` (type, date or interval, metadata).
public struct WorkoutEvent: Hashable, Sendable {
    /// `HKWorkoutEventType`, with Apple's raw values.
    public enum Kind: UInt8, Sendable, CaseIterable {
        case pause = 1
        case resume = 2
        case lap = 3
        case marker = 4
        case motionPaused = 5
        case motionResumed = 6
        case segment = 7
        case pauseOrResumeRequest = 8

        /// The name an export writes, e.g. `HKWorkoutEventTypePause`.
        public var exportName: String {
            let name = String(describing: self)
            return "HKWorkoutEventType" + name.prefix(1).uppercased() + name.dropFirst()
        }

        /// The kind an export or a user names: `pause`, `HKWorkoutEventTypePause` (any case).
        public init?(named text: String) {
            let lowered = text.lowercased()
            guard
                let kind = Kind.allCases.first(where: {
                    "\($0)".lowercased() == lowered || $0.exportName.lowercased() == lowered
                })
            else { return nil }
            self = kind
        }
    }

    public var kind: Kind
    /// When it happened (the start of its interval).
    public var date: Timestamp
    /// Microseconds; 0 for an instant.
    public var duration: Int64
    public var metadata: [String: MetadataValue]

    /// An event from its parts.
    public init(kind: Kind, date: Timestamp, duration: Int64 = 0, metadata: [String: MetadataValue] = [:]) {
        self.kind = kind
        self.date = date
        self.duration = duration
        self.metadata = metadata
    }
}

/// Statistics of one quantity over a workout (an export's `<WorkoutStatistics>`): the figures it has, as written.
public struct WorkoutStatistic: Hashable, Sendable {
    /// The quantity type as written (`HKQuantityTypeIdentifierHeartRate`).
    public var type: String
    public var start: Timestamp
    public var end: Timestamp
    public var sum: Double?
    public var average: Double?
    public var minimum: Double?
    public var maximum: Double?
    /// The figures' unit symbol.
    public var unit: String

    /// Statistics from their parts.
    public init(
        type: String, start: Timestamp, end: Timestamp, sum: Double? = nil, average: Double? = nil,
        minimum: Double? = nil, maximum: Double? = nil, unit: String
    ) {
        self.type = type
        self.start = start
        self.end = end
        self.sum = sum
        self.average = average
        self.minimum = minimum
        self.maximum = maximum
        self.unit = unit
    }
}

/// One workout: HealthKit's `HKWorkout` for one subject (HEALTHKIT.md §13).
public struct Workout: Hashable, Sendable {
    /// Unique per subject; re-sending the same UUID with the same content is a no-op.
    public var uuid: UUID
    public var activityType: WorkoutActivityType
    public var start: Timestamp
    public var end: Timestamp
    /// Microseconds of activity as given (the export's `duration`), whatever end − start: pauses make it shorter,
    /// and some apps write it longer (Garmin: a second more); HealthKit keeps it as written.
    public var duration: Int64
    public var totalEnergyBurned: WorkoutTotal?
    public var totalDistance: WorkoutTotal?
    public var source: SourceInfo
    public var metadata: [String: MetadataValue]
    public var events: [WorkoutEvent]
    public var statistics: [WorkoutStatistic]
    /// Route files the export references (`/workout-routes/route_….gpx`), as written.
    public var routes: [String]

    /// A workout; the UUID defaults to the content identity (``contentID``).
    public init(
        uuid: UUID? = nil, activityType: WorkoutActivityType, start: Timestamp, end: Timestamp,
        duration: Int64? = nil, totalEnergyBurned: WorkoutTotal? = nil, totalDistance: WorkoutTotal? = nil,
        source: SourceInfo, metadata: [String: MetadataValue] = [:], events: [WorkoutEvent] = [],
        statistics: [WorkoutStatistic] = [], routes: [String] = []
    ) {
        self.activityType = activityType
        self.start = start
        self.end = end
        self.duration = duration ?? (end &- start)
        self.totalEnergyBurned = totalEnergyBurned
        self.totalDistance = totalDistance
        self.source = source
        self.metadata = metadata
        self.events = events
        self.statistics = statistics
        self.routes = routes
        self.uuid = UUID()
        self.uuid = uuid ?? contentID
    }

    /// The content identity (as ``Sample/stableID()`` for samples): a version-8 UUID of the source name, the
    /// activity type, start and end, so an export imported again names the same workouts.
    public var contentID: UUID { contentHash.uuid }

    /// The hash state ``contentID`` turns into its UUID: the base of an exported workout's identity (the importer
    /// continues it with the element's whole content).
    package var contentHash: ContentHash128 {
        SampleContentIdentity.hash(
            sourceName: Array(source.name.utf8), typeIdentifier: Array("workout.\(activityType.name)".utf8),
            start: start, end: end,
            canonicalValue: 0)
    }

    /// Limits a workout must keep (checked on every insert; the codec caps lengths before allocating).
    public enum Limits {
        public static let maxEvents = 4096
        public static let maxStatistics = 256
        public static let maxRoutes = 16
        /// The longest duration, in µs: the span of ``SupportedInstants`` (years 0001–9999), so that an instant
        /// plus a duration stays within `Int64`.
        public static let maxDuration: Int64 = SupportedInstants.range.upperBound - SupportedInstants.range.lowerBound
    }

    /// Throws ``ErrorCode/invalidSample`` naming the workout when it breaks a rule: instants within
    /// ``SupportedInstants``, start ≤ end, a duration between 0 and ``Limits/maxDuration`` whatever end − start
    /// (HealthKit keeps the duration an app gives), finite totals with units that measure energy and length, events
    /// inside the workout, at most ``Limits`` events, statistics and routes.
    public func validate() throws {
        func fail(_ why: String) -> HealthError {
            HealthError(.invalidSample, "workout \(uuid) (\(activityType)): \(why)")
        }
        guard SupportedInstants.contains(start), SupportedInstants.contains(end) else {
            throw fail("its instants lie outside \(SupportedInstants.description)")
        }
        guard start <= end else { throw fail("it ends before it starts") }
        guard duration >= 0, duration <= Limits.maxDuration else {
            throw fail("its duration \(duration) µs is not within 0 … \(Limits.maxDuration) µs")
        }
        try Self.check(totalEnergyBurned, measures: WorkoutTotal.energyUnit, "energy", fail)
        try Self.check(totalDistance, measures: WorkoutTotal.distanceUnit, "distance", fail)
        guard events.count <= Limits.maxEvents, statistics.count <= Limits.maxStatistics,
            routes.count <= Limits.maxRoutes
        else { throw fail("it has too many events, statistics or routes") }
        for event in events {
            guard SupportedInstants.contains(event.date), event.duration >= 0,
                SupportedInstants.contains(event.date &+ event.duration)
            else { throw fail("an event lies outside \(SupportedInstants.description)") }
        }
        for statistic in statistics {
            guard SupportedInstants.contains(statistic.start), SupportedInstants.contains(statistic.end) else {
                throw fail("statistics of \(statistic.type) lie outside \(SupportedInstants.description)")
            }
        }
    }

    private static func check(
        _ total: WorkoutTotal?, measures unit: HealthUnit, _ what: String, _ fail: (String) -> HealthError
    ) throws {
        guard let total else { return }
        guard total.value.isFinite, total.value >= 0 else {
            throw fail("its total \(what) \(total.value) is not valid")
        }
        guard total.value(in: unit) != nil else {
            throw fail("its total \(what) unit \"\(total.unit)\" does not measure \(what)")
        }
    }
}
