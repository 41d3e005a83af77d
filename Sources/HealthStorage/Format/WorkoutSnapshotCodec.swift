import Foundation
import HealthCodec
import HealthEngine
import HealthModel

/// The byte layout of the workout snapshot file `workout-<generation>.snap` (Protocol/STORAGE.md, "Workout
/// snapshot"): magic, the log sequence it is complete up to, the store's last anchor, per subject its workouts and
/// deletion records, and a CRC-32 of everything before it. Pure functions, thread-safe.
public enum WorkoutSnapshotCodec {
    /// First 8 bytes of the file.
    public static let magic: [UInt8] = Array("HKWKT001".utf8)

    /// The file's bytes for `image`, complete up to log record `sequence`.
    public static func encode(_ image: WorkoutImage, sequence: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: 256 + image.workoutCount * 256)
        w.write(bytes: magic)
        w.writeLE(sequence)
        w.writeLE(image.lastAnchor)
        w.writeVarint(UInt64(image.subjects.count))
        for subject in image.subjects.keys.sorted() {
            let entry = image.subjects[subject]!
            w.writeString(subject)
            let workouts = entry.workouts.sorted { $0.anchor < $1.anchor }
            w.writeVarint(UInt64(workouts.count))
            for stored in workouts {
                w.writeVarint(stored.anchor)
                w.writeVarint(UInt64(stored.writer))
                w.writeWorkout(stored.workout)
            }
            w.writeVarint(UInt64(entry.deletions.count))
            for deletion in entry.deletions {
                w.writeUUID(deletion.uuid)
                w.writeVarint(deletion.anchor)
                w.writeVarint(UInt64(deletion.writer))
            }
        }
        return SnapshotTrailer.sealed(w.bytes)
    }

    /// Decodes a file; throws ``CodecError`` naming the offset of the problem (bad magic or checksum, counts past
    /// the bytes left, an anchor above the last one, bytes left over).
    public static func decode(_ bytes: [UInt8]) throws -> (image: WorkoutImage, sequence: UInt64) {
        var r = try SnapshotTrailer.opened(bytes, magic: magic, what: "workout snapshot")
        let sequence = try r.readLE(UInt64.self)
        let lastAnchor = try r.readLE(UInt64.self)
        let subjectCount = try r.readListCount("subject", limits: FieldCaps.storage, minBytes: 3)
        var subjects: [String: (workouts: [StoredWorkout], deletions: [WorkoutDeletion])] = [:]
        for _ in 0..<subjectCount {
            let subject = try r.readString(limit: SampleRules.maxSubjectLength)
            let count = try r.readListCount("workout", limits: FieldCaps.storage, minBytes: 32)
            var workouts: [StoredWorkout] = []
            workouts.reserveCapacity(count)
            for _ in 0..<count {
                let at = r.offset
                let anchor = try r.readVarint()
                let writer = try r.readVarint()
                guard anchor <= lastAnchor, let writer = UInt32(exactly: writer) else {
                    throw CodecError(.malformedPayload, "workout anchor or writer out of range at offset \(at)")
                }
                workouts.append(
                    StoredWorkout(workout: try r.readWorkout(FieldCaps.storage), anchor: anchor, writer: writer))
            }
            let deletionCount = try r.readListCount("workout deletion", limits: FieldCaps.storage, minBytes: 18)
            var deletions: [WorkoutDeletion] = []
            deletions.reserveCapacity(deletionCount)
            for _ in 0..<deletionCount {
                let uuid = try r.readUUID()
                let at = r.offset
                let anchor = try r.readVarint()
                let writer = try r.readVarint()
                guard anchor <= lastAnchor, let writer = UInt32(exactly: writer) else {
                    throw CodecError(
                        .malformedPayload, "workout deletion anchor or writer out of range at offset \(at)")
                }
                deletions.append(WorkoutDeletion(uuid: uuid, anchor: anchor, writer: writer))
            }
            guard subjects.updateValue((workouts, deletions), forKey: subject) == nil else {
                throw CodecError(.malformedPayload, "subject \(subject) appears twice in the workout snapshot")
            }
        }
        try r.expectEnd("the workout snapshot")
        return (WorkoutImage(lastAnchor: lastAnchor, subjects: subjects), sequence)
    }
}
