import Foundation
import HealthCodec
import HealthEngine
import HealthModel

/// The byte layout of the route snapshot file `route-<generation>.snap` (Protocol/STORAGE.md, "Route snapshot"):
/// ``ObjectSnapshotCodec`` with the magic `HKRTE001` and PROTOCOL.md's *Route*.
public typealias RouteSnapshotCodec = ObjectSnapshotCodec<WorkoutRoute>

extension WorkoutRoute: SnapshotObject {
    public static var snapshotMagic: [UInt8] { Array("HKRTE001".utf8) }
    public static var minEncodedBytes: Int { ByteReader.minRouteBytes }
    public func write(into w: inout ByteWriter) { w.writeRoute(self) }
    public static func read(from r: inout ByteReader) throws -> WorkoutRoute { try r.readRoute(FieldCaps.storage) }
}
