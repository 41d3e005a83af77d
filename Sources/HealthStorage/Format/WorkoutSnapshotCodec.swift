import Foundation
import HealthCodec
import HealthEngine
import HealthModel

/// The byte layout of the workout snapshot file `workout-<generation>.snap` (Protocol/STORAGE.md, "Workout
/// snapshot"): ``ObjectSnapshotCodec`` with the magic `HKWKT001` and PROTOCOL.md's *Workout*.
public typealias WorkoutSnapshotCodec = ObjectSnapshotCodec<Workout>

extension Workout: SnapshotObject {
    public static var snapshotMagic: [UInt8] { Array("HKWKT001".utf8) }
    // Anchor and writer come on top (ObjectSnapshotCodec adds 2).
    public static var minEncodedBytes: Int { ByteReader.minWorkoutBytes }
    public func write(into w: inout ByteWriter) { w.writeWorkout(self) }
    public static func read(from r: inout ByteReader) throws -> Workout { try r.readWorkout(FieldCaps.storage) }
}
