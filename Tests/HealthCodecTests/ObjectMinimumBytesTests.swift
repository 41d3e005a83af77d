import Foundation
import HealthCodec
import HealthModel
import Testing

/// The fewest bytes an object list assumes per entry caps its count before anything is allocated, so it must be
/// a lower bound of every encoding the decoder accepts: a cap above the smallest one refuses a valid file (the
/// snapshot fuzz harness found a route snapshot that decoded but, written again more tightly, did not).
@Suite("Smallest object encodings")
struct ObjectMinimumBytesTests {
    static let empty = SourceInfo(name: "")

    /// The bytes of `write`, after checking that `read` takes them back whole.
    static func smallest<T: Equatable>(
        _ value: T, _ write: (inout ByteWriter, T) -> Void, _ read: (inout ByteReader) throws -> T
    ) throws -> Int {
        var w = ByteWriter()
        write(&w, value)
        var r = ByteReader(w.bytes)
        #expect(try read(&r) == value)
        #expect(r.isAtEnd)
        return w.bytes.count
    }

    @Test("a route with no path and no points decodes, and takes no fewer bytes than the route cap assumes")
    func route() throws {
        let route = WorkoutRoute(uuid: UUID(), workout: UUID(), path: "", points: [])
        let bytes = try Self.smallest(route, { $0.writeRoute($1) }, { try $0.readRoute(FieldCaps.storage) })
        #expect(bytes >= ByteReader.minRouteBytes)
    }

    @Test("a correlation with no members, source strings or metadata takes no fewer bytes than its cap assumes")
    func correlation() throws {
        let correlation = Correlation(
            uuid: UUID(), type: .food, start: 0, end: 0, source: Self.empty, members: [])
        let bytes = try Self.smallest(
            correlation, { $0.writeCorrelation($1) }, { try $0.readCorrelation(FieldCaps.storage) })
        #expect(bytes >= ByteReader.minCorrelationBytes)
    }

    @Test("a workout with nothing optional takes no fewer bytes than its cap assumes")
    func workout() throws {
        let workout = Workout(
            uuid: UUID(), activityType: .archery, start: 0, end: 0, duration: 0, source: Self.empty)
        let bytes = try Self.smallest(workout, { $0.writeWorkout($1) }, { try $0.readWorkout(FieldCaps.storage) })
        #expect(bytes >= ByteReader.minWorkoutBytes)
    }
}
