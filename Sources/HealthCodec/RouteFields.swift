import Foundation
import HealthModel

// The byte layout of one workout route (Protocol/PROTOCOL.md, "Route"), shared by the protocol, the log and the
// route snapshot: points as deltas of time and position, optional columns as `f32`.

extension ByteWriter {
    /// Appends `route` (Protocol/PROTOCOL.md, "Route").
    public mutating func writeRoute(_ route: WorkoutRoute) {
        writeUUID(route.uuid)
        writeUUID(route.workout)
        writeString(route.path)
        writeVarint(UInt64(route.points.count))
        let columns: [KeyPath<RoutePoint, Double?>] = [\.elevation, \.speed, \.course]
        let present = columns.map { column in route.points.contains { $0[keyPath: column] != nil } }
        write(present.enumerated().reduce(UInt8(0)) { $0 | ($1.element ? UInt8(1) << $1.offset : 0) })
        var previous = (time: Int64(0), latitude: Int64(0), longitude: Int64(0))
        for point in route.points {
            let now = (time: point.time, latitude: point.latitudeE7, longitude: point.longitudeE7)
            writeSignedVarint(now.time &- previous.time)
            writeSignedVarint(now.latitude &- previous.latitude)
            writeSignedVarint(now.longitude &- previous.longitude)
            previous = now
            for (column, shown) in zip(columns, present) where shown {
                let value = point[keyPath: column].map(Float.init) ?? .nan
                withUnsafeBytes(of: value.bitPattern.littleEndian) { write(bytes: Array($0)) }
            }
        }
    }
}

extension ByteReader {
    /// The fewest bytes a route takes (no path, no points: the decoder reads such a one, and validation refuses
    /// it later): what a list of routes is capped with.
    public static let minRouteBytes = 35

    /// Reads a route written by ``ByteWriter/writeRoute(_:)``; the point count is capped by the bytes left and
    /// ``WorkoutRoute/Limits``, unknown column flags are ``ErrorCode/malformedPayload``.
    public mutating func readRoute(_ limits: some FieldLimits) throws -> WorkoutRoute {
        let uuid = try readUUID()
        let workout = try readUUID()
        let path = try readString(limits)
        let count = try readCount("route point count", limit: WorkoutRoute.Limits.maxPoints)
        let flags = try readByte()
        guard flags & ~7 == 0 else {
            throw CodecError(.malformedPayload, "unknown route column flags \(flags) before byte \(offset)")
        }
        let columns = (0..<3).filter { flags & (1 << $0) != 0 }
        // A point takes at least 3 bytes and 4 a column.
        guard count <= remaining / (3 + 4 * columns.count) else {
            throw CodecError(.malformedPayload, "route point count \(count) is larger than the \(remaining) bytes left")
        }
        var points: [RoutePoint] = []
        points.reserveCapacity(count)
        var previous = (time: Int64(0), latitude: Int64(0), longitude: Int64(0))
        for _ in 0..<count {
            previous = (
                previous.time &+ (try readSignedVarint()), previous.latitude &+ (try readSignedVarint()),
                previous.longitude &+ (try readSignedVarint())
            )
            var values: [Float?] = [nil, nil, nil]
            for column in columns {
                let value = Float(bitPattern: try readLE(UInt32.self))
                values[column] = value.isNaN ? nil : value
            }
            points.append(
                RoutePoint(
                    time: previous.time, latitudeE7: previous.latitude, longitudeE7: previous.longitude,
                    elevation: values[0], speed: values[1], course: values[2]))
        }
        return WorkoutRoute(uuid: uuid, workout: workout, path: path, points: points)
    }
}
