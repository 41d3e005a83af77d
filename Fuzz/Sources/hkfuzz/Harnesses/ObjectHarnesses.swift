import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthStorage

/// The two harnesses every stored object kind (workouts, correlations; HEALTHKIT.md §13) has: its shared byte
/// layout, and its snapshot file.
enum ObjectHarnesses {
    /// An object as the protocol and the log write it: if it decodes, its encoding decodes to the same bytes.
    static func layout<Object: SnapshotObject>(_ name: String, _ summary: String, _ objects: [Object]) -> Harness {
        Harness(
            name, summary,
            seeds: {
                objects.map { object in
                    var writer = ByteWriter()
                    object.write(into: &writer)
                    return writer.bytes
                }
            }
        ) { input in
            var reader = ByteReader(input.rest())
            guard let object = attempt({ try Object.read(from: &reader) }) else { return }
            var writer = ByteWriter()
            object.write(into: &writer)
            var again = ByteReader(writer.bytes)
            guard let decoded = attempt({ try Object.read(from: &again) }) else {
                require(false, "a re-encoded \(Object.objectName) does not decode")
                return
            }
            var check = ByteWriter()
            decoded.write(into: &check)
            require(check.bytes == writer.bytes, "\(Object.objectName) round trip differs")
            _ = attempt { try object.validate() }
        }
    }

    /// Byte 0 bit 0 asks for the trailing CRC to be computed; the rest is a snapshot of `Object`, which must
    /// re-encode to a file that decodes to the same bytes, and restore into a store or be refused.
    static func snapshot<Object: SnapshotObject>(_ name: String, _ summary: String, _ objects: [Object]) -> Harness {
        Harness(
            name, summary,
            seeds: {
                let store = ObjectStore<Object>()
                _ = try? store.insert(subject: "anna", objects, writer: 2)
                _ = try? store.delete(subject: "anna", uuids: [objects[objects.count - 1].uuid])
                let bytes = ObjectSnapshotCodec<Object>.encode(store.image { 9 }.0, sequence: 9)
                return [[0] + bytes, [1] + bytes.dropLast(4)]
            }
        ) { input in
            let control = input.byte()
            let bytes = control & 1 != 0 ? StorageHarnesses.withChecksum(input.rest()) : input.rest()
            guard let decoded = attempt({ try ObjectSnapshotCodec<Object>.decode(bytes) }) else { return }
            let encoded = ObjectSnapshotCodec<Object>.encode(decoded.image, sequence: decoded.sequence)
            let again: (image: ObjectImage<Object>, sequence: UInt64)
            do { again = try ObjectSnapshotCodec<Object>.decode(encoded) } catch {
                require(
                    false, "a decoded \(Object.objectName) snapshot re-encodes to a file that does not decode: \(error)"
                )
                return
            }
            require(
                ObjectSnapshotCodec<Object>.encode(again.image, sequence: again.sequence) == encoded,
                "\(Object.objectName) snapshot round trip differs")
            _ = attempt { try ObjectStore<Object>().restore(decoded.image) }
        }
    }
}
