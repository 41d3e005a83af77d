import Foundation

/// GPX route files as Apple Health exports write them (`workout-routes/route_….gpx`), from a seeded generator:
/// a walk from the Eiffel Tower, one point a second, with elevation, speed, course and accuracies.
public enum RouteExport {
    /// One point of a route file, as written.
    public struct Point: Sendable {
        public var time: String
        public var latitude: Double
        public var longitude: Double
        public var elevation: Double
        public var speed: Double
        public var course: Double
    }

    /// `count` points from `start` (`2024-01-01T07:12:00Z`), seeded by `seed`.
    public static func points(_ count: Int, seed: UInt64, start: Date) -> [Point] {
        var random = SplitMix64(seed: seed)
        var latitude = 48.8583701
        var longitude = 2.2944813
        let formatter = ISO8601DateFormatter()
        return (0..<count).map { index in
            latitude += Double(random.next() % 100) * 1e-7
            longitude += Double(random.next() % 100) * 1e-7
            return Point(
                time: formatter.string(from: start.addingTimeInterval(Double(index))),
                latitude: (latitude * 1e7).rounded() / 1e7, longitude: (longitude * 1e7).rounded() / 1e7,
                elevation: 30 + Double(random.next() % 100) / 10, speed: Double(random.next() % 40) / 10,
                course: Double(random.next() % 3600) / 10)
        }
    }

    /// The GPX document of `points`, laid out as Apple's exporter does.
    public static func gpx(_ points: [Point]) -> String {
        let body = points.map { point in
            """
            <trkpt lon="\(point.longitude)" lat="\(point.latitude)"><ele>\(point.elevation)</ele><time>\(point.time)</time><extensions><speed>\(point.speed)</speed><course>\(point.course)</course><hAcc>1.5</hAcc><vAcc>1.2</vAcc></extensions></trkpt>
            """
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="Apple Health Export" xmlns="http://www.topografix.com/GPX/1/1" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
            <metadata><time>\(points.first?.time ?? "")</time></metadata>
            <trk>
            <name>Route 2024-01-01 7:12am</name>
            <trkseg>
            \(body.joined(separator: "\n"))
            </trkseg>
            </trk>
            </gpx>

            """
    }

    /// An export.xml with one run that names the route file `path` (and, when `inline`, holds inline
    /// `<Location>`s of the first points too, as older exports do).
    public static func document(path: String, start: String, end: String, inline: [Point] = []) -> String {
        let locations = inline.map { point in
            #"   <Location date="\#(point.time)" latitude="\#(point.latitude)" longitude="\#(point.longitude)" altitude="\#(point.elevation)" horizontalAccuracy="1.5" verticalAccuracy="1.2" course="\#(point.course)" speed="\#(point.speed)"/>"#
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="20" durationUnit="min" sourceName="Watch" startDate="\(start)" endDate="\(end)">
              <WorkoutRoute sourceName="Watch" startDate="\(start)" endDate="\(end)">
               <FileReference path="\(path)"/>
              </WorkoutRoute>
              <WorkoutRoute sourceName="Watch" startDate="\(start)" endDate="\(end)">
            \(locations.joined(separator: "\n"))
              </WorkoutRoute>
             </Workout>
            </HealthData>

            """
    }
}
