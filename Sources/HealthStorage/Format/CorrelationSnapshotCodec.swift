import Foundation
import HealthCodec
import HealthEngine
import HealthModel

/// The byte layout of the correlation snapshot file `correlation-<generation>.snap` (Protocol/STORAGE.md,
/// "Correlation snapshot"): ``ObjectSnapshotCodec`` with the magic `HKCOR001` and PROTOCOL.md's *Correlation*.
public typealias CorrelationSnapshotCodec = ObjectSnapshotCodec<Correlation>

extension Correlation: SnapshotObject {
    public static var snapshotMagic: [UInt8] { Array("HKCOR001".utf8) }
    public static var minEncodedBytes: Int { ByteReader.minCorrelationBytes }
    public func write(into w: inout ByteWriter) { w.writeCorrelation(self) }
    public static func read(from r: inout ByteReader) throws -> Correlation {
        try r.readCorrelation(FieldCaps.storage)
    }
}
