import Foundation
import HealthCodec
import HealthEngine
import HealthModel

/// An object with a snapshot file of its own (Protocol/STORAGE.md, "Workout snapshot", "Correlation snapshot").
public protocol SnapshotObject: StorableObject {
    /// The file's first 8 bytes.
    static var snapshotMagic: [UInt8] { get }
    /// The fewest bytes one object takes, to cap counts before allocating.
    static var minEncodedBytes: Int { get }
    /// Appends the object as the protocol writes it.
    func write(into w: inout ByteWriter)
    /// Reads one object written by ``write(into:)``.
    static func read(from r: inout ByteReader) throws -> Self
}

/// The byte layout of an object snapshot file `<type>-<generation>.snap`: magic, the log sequence it is complete
/// up to, the store's last anchor, per subject its objects (anchor, writer, object) and deletion records, and a
/// CRC-32 of everything before it. Pure functions, thread-safe.
public enum ObjectSnapshotCodec<Object: SnapshotObject> {
    /// First 8 bytes of the file.
    public static var magic: [UInt8] { Object.snapshotMagic }

    /// The file's bytes for `image`, complete up to log record `sequence`.
    public static func encode(_ image: ObjectImage<Object>, sequence: UInt64) -> [UInt8] {
        var w = ByteWriter(capacity: 256 + image.objectCount * 256)
        w.write(bytes: magic)
        w.writeLE(sequence)
        w.writeLE(image.lastAnchor)
        w.writeVarint(UInt64(image.subjects.count))
        for subject in image.subjects.keys.sorted() {
            let entry = image.subjects[subject]!
            w.writeString(subject)
            w.writeList(entry.objects.sorted { $0.anchor < $1.anchor }) { w, stored in
                w.writeVarint(stored.anchor)
                w.writeVarint(UInt64(stored.writer))
                stored.object.write(into: &w)
            }
            w.writeList(entry.deletions) { w, deletion in
                w.writeUUID(deletion.uuid)
                w.writeVarint(deletion.anchor)
                w.writeVarint(UInt64(deletion.writer))
            }
        }
        return SnapshotTrailer.sealed(w.bytes)
    }

    /// Decodes a file; throws ``CodecError`` naming the offset of the problem (bad magic or checksum, counts past
    /// the bytes left, an anchor above the last one, bytes left over).
    public static func decode(_ bytes: [UInt8]) throws -> (image: ObjectImage<Object>, sequence: UInt64) {
        let name = Object.objectName
        var r = try SnapshotTrailer.opened(bytes, magic: magic, what: "\(name) snapshot")
        let sequence = try r.readLE(UInt64.self)
        let lastAnchor = try r.readLE(UInt64.self)
        let subjectCount = try r.readListCount("subject", limits: FieldCaps.storage, minBytes: 3)
        var subjects: [String: ObjectBook<Object>] = [:]
        func anchorAndWriter(_ r: inout ByteReader, _ what: String) throws -> (UInt64, UInt32) {
            let at = r.offset
            let anchor = try r.readVarint()
            let writer = try r.readVarint()
            guard anchor <= lastAnchor, let writer = UInt32(exactly: writer) else {
                throw CodecError(.malformedPayload, "\(what) anchor or writer out of range at offset \(at)")
            }
            return (anchor, writer)
        }
        for _ in 0..<subjectCount {
            let subject = try r.readString(limit: SampleRules.maxSubjectLength)
            let objects = try r.readList(
                name, limits: FieldCaps.storage, minBytes: Object.minEncodedBytes + 2, max: Int.max
            ) { r in
                let (anchor, writer) = try anchorAndWriter(&r, name)
                return StoredObject(object: try Object.read(from: &r), anchor: anchor, writer: writer)
            }
            let deletions = try r.readList("\(name) deletion", limits: FieldCaps.storage, minBytes: 18, max: Int.max) {
                r in
                let uuid = try r.readUUID()
                let (anchor, writer) = try anchorAndWriter(&r, "\(name) deletion")
                return ObjectDeletion(uuid: uuid, anchor: anchor, writer: writer)
            }
            guard subjects.updateValue(ObjectBook(objects: objects, deletions: deletions), forKey: subject) == nil
            else { throw CodecError(.malformedPayload, "subject \(subject) appears twice in the \(name) snapshot") }
        }
        try r.expectEnd("the \(name) snapshot")
        return (ObjectImage(lastAnchor: lastAnchor, subjects: subjects), sequence)
    }
}
