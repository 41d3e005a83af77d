import HealthModel

/// Turns an export's `<Workout>` element and its children into a ``Workout`` (HEALTHKIT.md §13): the activity
/// type, interval, duration, totals with their units, source, `<MetadataEntry>`, `<WorkoutEvent>`,
/// `<WorkoutStatistics>` and the paths of `<WorkoutRoute><FileReference>`. Workouts are few, so attributes are
/// decoded to strings here rather than interned as records are. The UUID is the identity of the whole element
/// (``ElementIdentity``), so importing an export again adds nothing. Not thread-safe.
struct WorkoutMapper {
    /// A workout being read: its attributes done, children still arriving.
    struct Pending {
        var workout: Workout
        /// Whether the element gave the totals itself (newer exports give them only as statistics).
        var hasEnergy: Bool
        var hasDistance: Bool
        /// The `<Location>` children of its `<WorkoutRoute>`s (older exports write the points inline).
        var locations: [RoutePoint] = []
        /// The line of its start tag.
        var line = 0
        /// Children past a cap, counted and not kept: the workout is then rejected whole (``excess(_:)``).
        var extraMetadata = 0
        var extraEvents = 0
        var extraStatistics = 0
        var extraRoutes = 0
        /// `<Location>`s met, and why the first invalid one is: the inline route is then rejected whole
        /// (``inlineRouteRejection(_:)``).
        var locationsSeen = 0
        var locationProblem: Rejection?
        /// Children left out because they cannot be read (an event of a type HealthKit does not name, statistics
        /// without their type or dates, a metadata entry without its key), each named for the summary's skip
        /// counts.
        var unread: [String] = []
    }

    /// The attributes of one element, their references decoded.
    static func strings(_ attributes: [XMLAttribute]) -> [String: String] {
        var result: [String: String] = [:]
        var decoded: [UInt8] = []
        for attribute in attributes {
            let value: String
            if attribute.hasReferences {
                decoded.removeAll(keepingCapacity: true)
                _ = XMLReferences.decode(attribute.value, into: &decoded)
                value = String(decoding: decoded, as: UTF8.self)
            } else {
                value = attribute.value.string
            }
            result[attribute.name.string] = value
        }
        return result
    }

    /// The workout of a `<Workout>` element's attributes, or why it is rejected.
    static func workout(_ attributes: [XMLAttribute]) throws -> Pending {
        let fields = strings(attributes)
        let typeName = try require(fields, "workoutActivityType")
        guard let type = WorkoutActivityType(named: typeName) else {
            throw Rejection("unknown workout activity type \"\(typeName)\"")
        }
        let start = try date(fields, "startDate")
        let end = try date(fields, "endDate")
        guard start <= end else { throw Rejection("workout ends before it starts") }
        // The duration as written, to the µs, whatever end − start (HEALTHKIT.md §13): pauses make it shorter, and
        // some apps (Garmin) write it a second longer; HealthKit keeps it as given.
        var duration: Int64?
        if let text = fields["duration"] {
            guard let value = Double(text), value.isFinite, value >= 0,
                let seconds = WorkoutTotal(value: value, unit: fields["durationUnit"] ?? "min").value(
                    in: secondUnit),
                let micros = Int64(exactly: (seconds * 1e6).rounded()), micros <= Workout.Limits.maxDuration
            else { throw Rejection("workout duration is not valid", "workout duration \"\(text)\" is not valid") }
            duration = micros
        }
        let energy = try total(fields, "totalEnergyBurned", unit: "totalEnergyBurnedUnit", default: "kcal")
        let distance = try total(fields, "totalDistance", unit: "totalDistanceUnit", default: "km")
        let source = SourceInfo(
            name: try require(fields, "sourceName"), version: fields["sourceVersion"] ?? "",
            device: fields["device"].map(deviceShortForm) ?? "")
        let workout = Workout(
            activityType: type, start: start, end: end, duration: duration, totalEnergyBurned: energy,
            totalDistance: distance, source: source)
        return Pending(workout: workout, hasEnergy: energy != nil, hasDistance: distance != nil)
    }

    /// Adds the child element `name` (at depth 3, or a route's `<FileReference>` or `<Location>` at depth 4) to
    /// `pending`. Children past a cap are counted, not kept (``excess(_:)``, ``inlineRouteRejection(_:)``).
    static func add(child name: String, _ attributes: [XMLAttribute], to pending: inout Pending) {
        let fields = strings(attributes)
        switch name {
        case "MetadataEntry":
            switch MetadataEntryOutcome.add(
                fields["key"], fields["value"].map(metadataValue), to: &pending.workout.metadata)
            {
            case .kept: break
            case .pastCap: pending.extraMetadata += 1
            case .incomplete: pending.unread.append("Workout MetadataEntry without a key or value")
            }
        case "WorkoutEvent":
            guard pending.workout.events.count < Workout.Limits.maxEvents else {
                pending.extraEvents += 1
                return
            }
            guard let kind = fields["type"].flatMap(WorkoutEvent.Kind.init(named:)) else {
                pending.unread.append("WorkoutEvent of an unknown type")
                return
            }
            guard let date = try? date(fields, "date"), SupportedInstants.contains(date) else {
                pending.unread.append("WorkoutEvent without a valid date")
                return
            }
            var duration: Int64 = 0
            if let text = fields["duration"], let value = Double(text), value.isFinite, value >= 0,
                let seconds = WorkoutTotal(value: value, unit: fields["durationUnit"] ?? "min").value(in: secondUnit)
            {
                duration = Int64((seconds * 1e6).rounded())
            }
            pending.workout.events.append(WorkoutEvent(kind: kind, date: date, duration: duration))
        case "WorkoutStatistics":
            guard pending.workout.statistics.count < Workout.Limits.maxStatistics else {
                pending.extraStatistics += 1
                return
            }
            guard let type = fields["type"], let start = try? date(fields, "startDate"),
                let end = try? date(fields, "endDate"), SupportedInstants.contains(start),
                SupportedInstants.contains(end)
            else {
                pending.unread.append("WorkoutStatistics without a type or valid dates")
                return
            }
            func figure(_ key: String) -> Double? {
                fields[key].flatMap(Double.init).flatMap { $0.isFinite ? $0 : nil }
            }
            let statistic = WorkoutStatistic(
                type: type, start: start, end: end, sum: figure("sum"), average: figure("average"),
                minimum: figure("minimum"), maximum: figure("maximum"), unit: fields["unit"] ?? "")
            pending.workout.statistics.append(statistic)
            takeTotal(from: statistic, into: &pending)
        case "FileReference":
            guard let path = fields["path"] else { return }
            guard pending.workout.routes.count < Workout.Limits.maxRoutes else {
                pending.extraRoutes += 1
                return
            }
            pending.workout.routes.append(path)
        case "Location":
            pending.locationsSeen += 1
            guard pending.locationProblem == nil, pending.locations.count < WorkoutRoute.Limits.maxPoints else {
                return
            }
            switch location(fields, index: pending.locationsSeen - 1) {
            case .success(let point): pending.locations.append(point)
            case .failure(let rejection):
                pending.locationProblem = rejection
                pending.locations = []
            }
        default:
            break
        }
    }

    /// Why `pending` cannot be kept whole, or `nil`: more metadata entries than the wire carries in a row
    /// (``RecordMapper/maxMetadataEntries``), or more events, statistics or route files than a workout holds
    /// (``Workout/Limits``, the protocol's caps).
    static func excess(_ pending: Pending) -> Rejection? {
        let workout = pending.workout
        let counts = [
            ("metadata entries", workout.metadata.count, pending.extraMetadata, RecordMapper.maxMetadataEntries),
            ("events", workout.events.count, pending.extraEvents, Workout.Limits.maxEvents),
            ("statistics", workout.statistics.count, pending.extraStatistics, Workout.Limits.maxStatistics),
            ("route files", workout.routes.count, pending.extraRoutes, Workout.Limits.maxRoutes),
        ]
        for (children, kept, extra, limit) in counts where extra > 0 {
            return .tooMany(children, in: "workout", count: kept + extra, limit: limit)
        }
        return nil
    }

    /// Why the workout's inline route (its `<Location>`s) is rejected whole, or `nil`: more locations than a
    /// route holds, or one that is not a valid point.
    static func inlineRouteRejection(_ pending: Pending) -> Rejection? {
        guard pending.locationsSeen <= WorkoutRoute.Limits.maxPoints else {
            return .tooMany(
                "locations", in: "inline route", count: pending.locationsSeen, limit: WorkoutRoute.Limits.maxPoints)
        }
        return pending.locationProblem
    }

    /// The point of a `<Location>` (older exports' inline route), or why it is not one: a date, latitude and
    /// longitude, numbers where given, and the rules of a stored point (``RoutePoint/violation``), as for route
    /// files.
    static func location(_ fields: [String: String], index: Int) -> Result<RoutePoint, Rejection> {
        func fail(_ why: String) -> Result<RoutePoint, Rejection> {
            .failure(Rejection("route location is not valid", "inline route location \(index): \(why)"))
        }
        guard let time = try? date(fields, "date", of: "location") else { return fail("no valid date") }
        var numbers: [String: Double] = [:]
        for key in ["latitude", "longitude", "altitude", "speed", "course"] {
            guard let text = fields[key] else { continue }
            guard let number = Double(text), number.isFinite else {
                return fail("\(key) \"\(text.prefix(40))\" is not a number")
            }
            numbers[key] = number
        }
        guard let latitude = numbers["latitude"], let longitude = numbers["longitude"] else {
            return fail("no latitude and longitude")
        }
        let point = RoutePoint(
            time: time, latitude: latitude, longitude: longitude, elevation: numbers["altitude"],
            speed: numbers["speed"], course: numbers["course"])
        if let violation = point.violation { return fail(violation) }
        return .success(point)
    }

    /// Newer exports give energy and distance only as `<WorkoutStatistics>` sums: those become the totals.
    private static func takeTotal(from statistic: WorkoutStatistic, into pending: inout Pending) {
        guard let sum = statistic.sum, sum >= 0 else { return }
        let total = WorkoutTotal(value: sum, unit: statistic.unit)
        if !pending.hasEnergy, statistic.type == "HKQuantityTypeIdentifierActiveEnergyBurned",
            total.value(in: WorkoutTotal.energyUnit) != nil
        {
            pending.workout.totalEnergyBurned = total
        } else if !pending.hasDistance, statistic.type.hasPrefix("HKQuantityTypeIdentifierDistance"),
            total.value(in: WorkoutTotal.distanceUnit) != nil
        {
            pending.workout.totalDistance = total
        }
    }

    /// The finished workout, named by the identity of its whole element (``ElementIdentity``).
    static func finish(_ pending: Pending, identity: ElementIdentity) throws -> Workout {
        var workout = pending.workout
        workout.uuid = identity.uuid(base: workout.contentHash)
        do {
            try workout.validate()
        } catch let error as HealthError {
            throw Rejection("workout is not valid", error.message)
        }
        return workout
    }

    // MARK: - Fields

    // swift-format-ignore: NeverUseForceTry
    private static let secondUnit = try! HealthUnit(parsing: "s")

    /// The attribute `name` of an element (`workout`, `correlation`), or a rejection naming it.
    static func require(_ fields: [String: String], _ name: String, of element: String = "workout") throws -> String {
        guard let value = fields[name] else { throw Rejection("missing attribute \"\(name)\" of a \(element)") }
        return value
    }

    /// The instant of the attribute `name` of an element, or a rejection naming it.
    static func date(_ fields: [String: String], _ name: String, of element: String = "workout") throws -> Timestamp {
        let text = try require(fields, name, of: element)
        let bytes = Array(text.utf8)
        guard let instant = bytes.withUnsafeBufferPointer(ExportDateParser.parse) else {
            throw Rejection("\(element) \(name) is not a date", "\(element) \(name) \"\(text)\" is not a date")
        }
        return instant
    }

    private static func total(_ fields: [String: String], _ name: String, unit: String, default symbol: String) throws
        -> WorkoutTotal?
    {
        guard let text = fields[name] else { return nil }
        guard let value = Double(text), value.isFinite, value >= 0 else {
            throw Rejection("workout \(name) is not valid", "workout \(name) \"\(text)\" is not valid")
        }
        return WorkoutTotal(value: value, unit: fields[unit] ?? symbol)
    }

    /// A `<MetadataEntry>` value: a number when it parses fully, a string otherwise.
    static func metadataValue(_ text: String) -> MetadataValue {
        let bytes = Array(text.utf8)
        if let number = bytes.withUnsafeBufferPointer(DecimalParser.parse), number.isFinite { return .number(number) }
        return .string(text)
    }

    /// The short form of an export's `device` description (`Watch6,2`).
    static func deviceShortForm(_ raw: String) -> String {
        Array(raw.utf8).withUnsafeBufferPointer { DeviceDescription.shortForm($0).string }
    }
}
