import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthPosix
import TestSupport
import Testing

@testable import HealthStorage

/// Workout routes in the log (record kind 11), in their own snapshot file, and through restarts.
@Suite(.serialized)
struct RouteStorageTests {
    static let t0: Timestamp = 1_704_093_120_000_000

    /// `count` routes of `points` points each, for workouts a day apart.
    static func routes(_ count: Int, points: Int = 600) -> [WorkoutRoute] {
        var random = SplitMix64(seed: 11)
        return (0..<count).map { index in
            let start = t0 + Int64(index) * Micros.day
            let workout = Workout(
                activityType: .running, start: start, end: start + Micros.hour, source: SourceInfo(name: "Watch"))
            let trail = (0..<points).map { second in
                RoutePoint(
                    time: start + Int64(second) * Micros.second,
                    latitude: 48.85 + Double(random.next() % 10_000) * 1e-7,
                    longitude: 2.29 + Double(random.next() % 10_000) * 1e-7,
                    elevation: second % 7 == 0 ? nil : 30 + Double(second) / 100, speed: 3.25,
                    course: second.isMultiple(of: 2) ? 90 : nil)
            }
            return WorkoutRoute(workout: workout.uuid, path: "/workout-routes/route_\(index).gpx", points: trail)
        }
    }

    @Test("route records and their compact layout decode to the same routes; a cut payload is refused")
    func logRecords() throws {
        let change = LogChange.routes(subject: "anna", Self.routes(2), writer: 5)
        let payload = try change.encodePayload()
        #expect(change.kind.rawValue == 11 && change.type == "route")
        #expect(try LogChange.decode(kind: 11, payload: payload) == change)
        // Deltas and f32 columns: under 20 bytes a point with three columns (doubles would take 48).
        #expect(payload.count < 2 * 600 * 20)
        #expect(throws: CodecError.self) { try LogChange.decode(kind: 11, payload: Array(payload.dropLast())) }
    }

    @Test("routes survive a stop without a snapshot (replayed) and one with a snapshot (HKRTE001)")
    func restarts() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        #expect(try durable.insertRoutes(subject: "anna", Self.routes(3), writer: 2) == (3, 0))
        #expect(try durable.insertRoutes(subject: "anna", Self.routes(3), writer: 2) == (0, 3))
        let before = try durable.store.routes.objects(subject: "anna", filter: RouteFilter())
        durable.close(snapshot: false)
        let (replayed, _) = try openStore(directory)
        #expect(replayed.recovery.replayedRecords == 1)
        #expect(try replayed.store.routes.objects(subject: "anna", filter: RouteFilter()) == before)
        replayed.close()
        let files = try FileSystem.contentsOfDirectory(directory + "/snapshots")
        let name = try #require(files.first { $0.hasPrefix("route-") && $0.hasSuffix(".snap") })
        #expect(
            Array(try FileSystem.readFile(directory + "/snapshots/" + name, maxBytes: 1 << 20).prefix(8))
                == Array("HKRTE001".utf8))
        let (restored, _) = try openStore(directory)
        defer { restored.close() }
        #expect(restored.recovery.replayedRecords == 0)
        let after = try restored.store.routes.objects(
            subject: "anna", filter: RouteFilter(workouts: [Self.routes(3)[1].workout]))
        #expect(after.objects.map(\.object) == [Self.routes(3)[1]])
    }
}
