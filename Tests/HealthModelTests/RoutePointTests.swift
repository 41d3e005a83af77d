import Foundation
import Testing

@testable import HealthModel

/// The rule a stored route point keeps (``RoutePoint/violation``), shared by the server's route check and the
/// importer's readers.
struct RoutePointTests {
    static let time: Timestamp = 1_704_093_120_000_000

    @Test(
        "a point is refused for a time outside years 0001–9999, a place off the globe, or a value a Float cannot hold")
    func violations() throws {
        let cases: [(RoutePoint, String?)] = [
            (RoutePoint(time: Self.time, latitude: 48.85, longitude: 2.29, elevation: 35, speed: 3, course: 120), nil),
            (RoutePoint(time: Self.time, latitude: -90, longitude: 180, elevation: -3.4e38, speed: 3.4e38), nil),
            (
                RoutePoint(time: Self.time, latitude: 1, longitude: 2, speed: -1e308),
                "its speed is not a finite 32-bit float"
            ),
            (
                RoutePoint(time: Self.time, latitude: 1, longitude: 2, elevation: 1e39),
                "its elevation is not a finite 32-bit float"
            ),
            (
                RoutePoint(time: Self.time, latitude: 1, longitude: 2, course: -.infinity),
                "its course is not a finite 32-bit float"
            ),
            (
                RoutePoint(time: Self.time, latitude: 1, longitude: 2, speed: .nan),
                "its speed is not a finite 32-bit float"
            ),
            (RoutePoint(time: SupportedInstants.range.lowerBound - 1, latitude: 1, longitude: 2), "it lies outside"),
            (RoutePoint(time: SupportedInstants.range.upperBound + 1, latitude: 1, longitude: 2), "it lies outside"),
            (RoutePoint(time: Self.time, latitude: 90.5, longitude: 2), "it is not a place"),
            (RoutePoint(time: Self.time, latitude: 1, longitude: -181), "it is not a place"),
        ]
        for (point, expected) in cases {
            if let expected {
                #expect(point.violation?.hasPrefix(expected) == true, "\(point): \(point.violation ?? "valid")")
                // The server's check of a route refuses the point for the same reason.
                do {
                    try WorkoutRoute(workout: UUID(), path: "", points: [point]).validate()
                    Issue.record("validate accepted \(point)")
                } catch let error as HealthError {
                    #expect(error.code == .invalidSample && error.message.contains("point 0: \(expected)"))
                }
            } else {
                #expect(point.violation == nil, "\(point)")
                #expect(throws: Never.self) { try WorkoutRoute(workout: UUID(), path: "", points: [point]).validate() }
            }
        }
    }
}
