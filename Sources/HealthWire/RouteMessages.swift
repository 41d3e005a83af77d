import Foundation
import HealthCodec
import HealthModel

/// Adds workout routes for one subject (HEALTHKIT.md §13); all or none. Answered by ``RouteInsertAck``.
public struct RouteInsert: WireMessage {
    public static let kind = MessageKind.routeInsert
    /// At most this many routes in one request (and one ``RouteResult``): eight routes of the most points fit
    /// the default frame size.
    public static let maxRoutes = 8
    public var subject: String
    public var routes: [WorkoutRoute]

    public init(subject: String, routes: [WorkoutRoute]) {
        self.subject = subject
        self.routes = routes
    }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeList(routes) { $0.writeRoute($1) }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        routes = try r.readList("route", limits: limits, minBytes: ByteReader.minRouteBytes, max: Self.maxRoutes) {
            try $0.readRoute(limits)
        }
    }
}

/// How many routes of a ``RouteInsert`` were new and how many were already stored.
public struct RouteInsertAck: WireMessage {
    public static let kind = MessageKind.routeInsertAck
    public var inserted: UInt64
    public var duplicates: UInt64

    public init(inserted: UInt64, duplicates: UInt64) {
        self.inserted = inserted
        self.duplicates = duplicates
    }

    public func encode(into w: inout ByteWriter) {
        w.writeList([inserted, duplicates]) { $0.writeVarint($1) }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        let counts = try r.readList("route count", limits: limits, minBytes: 1, max: 2) { try $0.readVarint() }
        guard counts.count == 2 else { throw CodecError(.malformedPayload, "a route ack holds two counts") }
        (inserted, duplicates) = (counts[0], counts[1])
    }
}

/// Asks for the routes of some of one subject's workouts. Answered by ``RouteResult``.
public struct RouteQuery: WireMessage {
    public static let kind = MessageKind.routeQuery
    public var subject: String
    /// The workouts whose routes are wanted; empty: every workout's.
    public var workouts: [UUID]
    /// Only this identity's routes: set by the server's authorization, never on the wire.
    package var writer: UInt32?

    public init(subject: String, workouts: [UUID]) {
        self.subject = subject
        self.workouts = workouts
    }

    /// The filter the query asks for, with the writer the server's authorization set.
    public var filter: RouteFilter { RouteFilter(workouts: workouts.isEmpty ? nil : Set(workouts), writer: writer) }

    public func encode(into w: inout ByteWriter) {
        w.writeString(subject)
        w.writeUUIDs(workouts)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        subject = try r.readString(limits)
        workouts = try r.readUUIDs(limits)
    }
}

/// The routes a ``RouteQuery`` found, by their first point, at most ``RouteInsert/maxRoutes``, each with its
/// anchor; `more` when others matched (ask for fewer workouts at a time).
public struct RouteResult: WireMessage {
    public static let kind = MessageKind.routeResult
    public var routes: [(anchor: UInt64, route: WorkoutRoute)]
    public var more: Bool

    public init(routes: [(anchor: UInt64, route: WorkoutRoute)], more: Bool = false) {
        self.routes = routes
        self.more = more
    }

    public func encode(into w: inout ByteWriter) {
        w.writeList(routes) {
            $0.writeVarint($1.anchor)
            $0.writeRoute($1.route)
        }
        w.writeBool(more)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        routes = try r.readList(
            "route", limits: limits, minBytes: ByteReader.minRouteBytes + 1, max: RouteInsert.maxRoutes
        ) { (try $0.readVarint(), try $0.readRoute(limits)) }
        more = try r.readBool()
    }

    public static func == (a: RouteResult, b: RouteResult) -> Bool {
        a.routes.map(\.anchor) == b.routes.map(\.anchor) && a.routes.map(\.route) == b.routes.map(\.route)
            && a.more == b.more
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(routes.map(\.route)) }
}
