import Foundation
import HealthClient
import HealthModel

/// `hkq route WORKOUT-UUID [--gpx]`: the points of a workout's routes (HEALTHKIT.md §13), as rows or as GPX.
public struct RouteCommand: Command {
    /// A route command.
    public init() {}

    /// `route <workout>` with `--tz` and `--gpx`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "route", abstract: "Print the route points of a workout (hkq workouts lists their UUIDs).",
            discussion: """
                One row per point, by time: time, latitude and longitude (degrees), elevation (m), speed (m/s) \
                and course (degrees; empty where the route has none), and route (the route's UUID, JSON and CSV \
                only; a workout may have several routes). --gpx prints the points as a GPX 1.1 document instead, \
                one track segment per route.
                """,
            arguments: [ArgumentSpec("workout", help: "The workout's UUID.")],
            options: [
                .option("tz", value: "zone", help: "IANA time zone for times (default: local)."),
                .flag("gpx", help: "Print a GPX document (times in UTC) instead of rows."),
            ], selectsFields: true)
    }

    /// Queries the workout's routes and prints their points.
    public func run(_ context: CommandContext) async throws {
        let text = context.argument(0)!
        guard let workout = UUID(uuidString: text.trimmingWhitespace) else {
            throw context.usageError("invalid workout UUID '\(text)'")
        }
        let times = TimestampFormatter(
            timeZone: try QueryScope.timeZone(context), timeFormat: context.globals.timeFormat)
        let subject = context.globals.subject
        let routes = try await ServerSession.run(context) { client in
            try await client.routes(of: workout, subject: subject)
        }
        guard !routes.isEmpty else {
            throw HealthError(.noData, "workout \(workout) has no route (or the workout is not stored)")
        }
        if context.arguments.flag("gpx") {
            if context.globals.fields != nil { throw context.usageError("--fields does not apply to --gpx") }
            context.console.printBlock(Self.gpx(routes))
            return
        }
        try context.print(Self.records(routes, times: times, format: context.globals.format))
    }

    /// One record per point of `routes`.
    static func records(_ routes: [WorkoutRoute], times: TimestampFormatter, format: OutputFormat) -> RecordSet {
        var records = RecordSet(columns: [
            .init("time", title: "TIME"), .init("latitude", title: "LATITUDE"), .init("longitude", title: "LONGITUDE"),
            .init("elevation", title: "ELEVATION"), .init("speed", title: "SPEED"), .init("course", title: "COURSE"),
            .init("route", title: "ROUTE", inTable: false),
        ])
        for route in routes {
            for point in route.points {
                records.append(
                    [times.cell(point.time, format: format), .number(point.latitude), .number(point.longitude)]
                        + [point.elevation, point.speed, point.course].map { $0.map(JSONValue.number) ?? .null }
                        + [.string(route.uuid.uuidString)])
            }
        }
        return records
    }

    /// `routes` as a GPX 1.1 document, one `<trkseg>` per route.
    static func gpx(_ routes: [WorkoutRoute]) -> String {
        let utc = TimestampFormatter(timeZone: TimeZone.gmt, timeFormat: .rfc3339)
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<gpx version="1.1" creator="hkq" xmlns="http://www.topografix.com/GPX/1/1">"#, "<trk>",
        ]
        for route in routes {
            lines.append("<trkseg>")
            for point in route.points {
                var line = #"<trkpt lat="\#(point.latitude)" lon="\#(point.longitude)">"#
                if let elevation = point.elevation { line += "<ele>\(elevation)</ele>" }
                line += "<time>\(utc.iso8601(point.time))</time>"
                let extensions = [("speed", point.speed), ("course", point.course)].compactMap { name, value in
                    value.map { "<\(name)>\($0)</\(name)>" }
                }
                if !extensions.isEmpty { line += "<extensions>" + extensions.joined() + "</extensions>" }
                lines.append(line + "</trkpt>")
            }
            lines.append("</trkseg>")
        }
        return (lines + ["</trk>", "</gpx>"]).joined(separator: "\n") + "\n"
    }
}
