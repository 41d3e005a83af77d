import Foundation

/// One location of a workout route (a GPX `<trkpt>`, an export's `<Location>`), stored at a fixed precision: the
/// latitude and longitude rounded to 1e-7 degree (about a centimetre), elevation, speed and course to `Float`
/// (kept as the shortest decimal of that `Float`).
/// The rounding happens here, so a point decoded from storage equals the point that was stored.
public struct RoutePoint: Hashable, Sendable {
    public var time: Timestamp
    /// Degrees north, −90 … 90.
    public var latitude: Double
    /// Degrees east, −180 … 180.
    public var longitude: Double
    /// Metres above sea level, when the file gives it.
    public var elevation: Double?
    /// Metres per second, when the file gives it.
    public var speed: Double?
    /// Degrees clockwise from north, when the file gives it.
    public var course: Double?

    /// A point from its parts, rounded to the stored precision.
    public init(
        time: Timestamp, latitude: Double, longitude: Double, elevation: Double? = nil, speed: Double? = nil,
        course: Double? = nil
    ) {
        self.time = time
        self.latitude = Self.degrees(latitude)
        self.longitude = Self.degrees(longitude)
        self.elevation = elevation.map(Self.single)
        self.speed = speed.map(Self.single)
        self.course = course.map(Self.single)
    }

    /// A point from its stored form: latitude and longitude in 1e-7 degrees.
    public init(
        time: Timestamp, latitudeE7: Int64, longitudeE7: Int64, elevation: Float?, speed: Float?, course: Float?
    ) {
        self.init(
            time: time, latitude: Double(latitudeE7) / 1e7, longitude: Double(longitudeE7) / 1e7,
            elevation: elevation.map(Double.init), speed: speed.map(Double.init), course: course.map(Double.init))
    }

    /// The latitude in 1e-7 degrees, as stored (`Int64.max` for a value no place has).
    public var latitudeE7: Int64 { Self.scaled(latitude) }
    /// The longitude in 1e-7 degrees, as stored (`Int64.max` for a value no place has).
    public var longitudeE7: Int64 { Self.scaled(longitude) }

    /// Why this point cannot be stored, or `nil`: its time within ``SupportedInstants``, the latitude within ±90
    /// and the longitude within ±180 degrees, elevation, speed and course finite as stored (a value past `Float`'s
    /// range, −1e308 say, is infinite once rounded). ``WorkoutRoute/validate()`` holds every point to it; importers
    /// check points with it before sending, so client and server apply one rule.
    public var violation: String? {
        guard SupportedInstants.contains(time) else { return "it lies outside \(SupportedInstants.description)" }
        guard abs(latitude) <= 90, abs(longitude) <= 180 else {
            return "it is not a place (latitude \(latitude), longitude \(longitude))"
        }
        for (name, value) in [("elevation", elevation), ("speed", speed), ("course", course)] {
            if let value, !value.isFinite { return "its \(name) is not a finite 32-bit float" }
        }
        return nil
    }

    private static func scaled(_ degrees: Double) -> Int64 {
        let value = (degrees * 1e7).rounded()
        return value.isFinite && abs(value) < 1e12 ? Int64(value) : Int64.max
    }

    private static func degrees(_ value: Double) -> Double {
        value.isFinite && abs(value) <= 360 ? (value * 1e7).rounded() / 1e7 : value
    }

    /// The `Float` nearest `value`, as the shortest decimal that names it (35.2, not 35.200000762939453), so it
    /// prints as written and stays the same through storage.
    private static func single(_ value: Double) -> Double {
        let single = Float(value)
        return single.isFinite ? Double("\(single)") ?? Double(single) : Double(single)
    }
}

/// The route of a workout (HealthKit's `HKWorkoutRoute`, HEALTHKIT.md §13): the file an export names and the
/// points it holds, kept whole. Routes are objects of their own (`route` in storage), tied to their workout by
/// its UUID; they are read and written under the workout type's grants.
public struct WorkoutRoute: Hashable, Sendable {
    /// The content identity of the workout and the path (``contentID``) unless given.
    public var uuid: UUID
    /// The workout it belongs to.
    public var workout: UUID
    /// The route file as the export names it (`/workout-routes/route_….gpx`); empty for inline locations.
    public var path: String
    /// The points by time.
    public var points: [RoutePoint]

    /// A route from its parts.
    public init(uuid: UUID? = nil, workout: UUID, path: String, points: [RoutePoint]) {
        self.workout = workout
        self.path = path
        self.points = points
        self.uuid = UUID()
        self.uuid = uuid ?? contentID
    }

    /// A version-8 UUID of the workout's UUID and the path: the same export names the same routes.
    public var contentID: UUID {
        SampleContentIdentity.uuid(
            sourceName: Array(workout.uuidString.utf8), typeIdentifier: Array("route.\(path)".utf8), start: 0, end: 0,
            canonicalValue: 0)
    }

    /// When the route starts (its first point), 0 without points.
    public var start: Timestamp { points.first?.time ?? 0 }

    /// Limits a route must keep.
    public enum Limits {
        /// Points of one route (a day at one point a second).
        public static let maxPoints = 86_400
    }

    /// Throws ``ErrorCode/invalidSample`` naming the route when it breaks a rule: 1 to ``Limits/maxPoints``
    /// points, times never decreasing, and every point valid (``RoutePoint/violation``: times within
    /// ``SupportedInstants``, latitudes within ±90 and longitudes within ±180 degrees, finite elevation, speed
    /// and course).
    public func validate() throws {
        func fail(_ why: String) -> HealthError {
            HealthError(.invalidSample, "route \(uuid) of workout \(workout): \(why)")
        }
        guard !points.isEmpty, points.count <= Limits.maxPoints else {
            throw fail("it has \(points.count) points; 1 to \(Limits.maxPoints)")
        }
        var previous = Timestamp.min
        for (index, point) in points.enumerated() {
            if let violation = point.violation { throw fail("point \(index): \(violation)") }
            guard point.time >= previous else { throw fail("point \(index) is earlier than the one before") }
            previous = point.time
        }
    }
}

/// Which routes a query wants: those of some workouts.
public struct RouteFilter: Hashable, Sendable {
    /// The workouts whose routes are wanted; `nil`: every workout's.
    public var workouts: Set<UUID>?
    /// Only routes with a larger anchor. 0: everything.
    public var afterAnchor: UInt64
    /// Only routes written by this identity (the read rule; set by the server's authorization).
    public var writer: UInt32?

    /// A filter; every route by default.
    public init(workouts: Set<UUID>? = nil, afterAnchor: UInt64 = 0, writer: UInt32? = nil) {
        self.workouts = workouts
        self.afterAnchor = afterAnchor
        self.writer = writer
    }

    /// Whether `route`, stored with `anchor` by `writer`, passes.
    public func matches(_ route: WorkoutRoute, anchor: UInt64, writer: UInt32) -> Bool {
        if let workouts, !workouts.contains(route.workout) { return false }
        return ObjectSelection.matches(
            start: nil, end: nil, uuids: nil, afterAnchor: afterAnchor, writer: self.writer, objectStart: route.start,
            uuid: route.uuid, anchor: anchor, objectWriter: writer)
    }
}
