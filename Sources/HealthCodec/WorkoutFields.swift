import Foundation
import HealthModel

// The byte layout of one workout (Protocol/PROTOCOL.md, "Workout"), shared by the protocol, the log and the
// workout snapshot: every length is capped before anything is allocated.

extension ByteWriter {
    /// Appends one metadata row as a blob: `varint length`, then the row as the sample batch's metadata column
    /// writes it (a count, then sorted key, tag, value entries).
    public mutating func writeMetadataRow(_ row: [String: MetadataValue]) {
        var inner = ByteWriter(capacity: 16)
        MetadataCodec.write(row, into: &inner)
        writeBlob(inner.bytes)
    }

    /// Appends `workout` (Protocol/PROTOCOL.md, "Workout").
    public mutating func writeWorkout(_ workout: Workout) {
        writeUUID(workout.uuid)
        writeVarint(UInt64(workout.activityType.rawValue))
        writeSignedVarint(workout.start)
        writeSignedVarint(workout.end)
        writeSignedVarint(workout.duration)
        let totals = [workout.totalEnergyBurned, workout.totalDistance]
        write(totals.enumerated().reduce(UInt8(0)) { $0 | ($1.element == nil ? 0 : UInt8(1) << $1.offset) })
        for total in totals.compactMap({ $0 }) {
            writeDouble(total.value)
            writeString(total.unit)
        }
        writeSource(workout.source)
        writeMetadataRow(workout.metadata)
        writeVarint(UInt64(workout.events.count))
        for event in workout.events {
            write(event.kind.rawValue)
            writeSignedVarint(event.date)
            writeSignedVarint(event.duration)
            writeMetadataRow(event.metadata)
        }
        writeVarint(UInt64(workout.statistics.count))
        for statistic in workout.statistics {
            writeString(statistic.type)
            writeSignedVarint(statistic.start)
            writeSignedVarint(statistic.end)
            let figures = [statistic.sum, statistic.average, statistic.minimum, statistic.maximum]
            write(figures.enumerated().reduce(UInt8(0)) { $0 | ($1.element == nil ? 0 : UInt8(1) << $1.offset) })
            for figure in figures.compactMap({ $0 }) { writeDouble(figure) }
            writeString(statistic.unit)
        }
        writeStrings(workout.routes)
    }
}

extension ByteReader {
    /// Reads a metadata row written by ``ByteWriter/writeMetadataRow(_:)``, capped by `limits` (strings) and
    /// ``BatchLimits/maxMetadataEntriesPerRow``.
    public mutating func readMetadataRow(_ limits: some FieldLimits) throws -> [String: MetadataValue] {
        let blob = Array(try readBlob(limit: remaining))
        let batchLimits = BatchLimits(maxStringBytes: min(limits.maxStringBytes, 65_536))
        return try blob.withUnsafeBufferPointer { buffer throws -> [String: MetadataValue] in
            guard let base = buffer.baseAddress else {
                throw CodecError(.malformedPayload, "empty metadata row before byte \(offset)")
            }
            var cursor = ColumnCursor(base: base, offset: 0, end: buffer.count)
            let row = try MetadataCodec.read(&cursor, limits: batchLimits)
            guard cursor.remaining == 0 else {
                throw CodecError(.malformedPayload, "\(cursor.remaining) unexpected bytes in a metadata row")
            }
            return row
        }
    }

    /// The fewest bytes a workout takes (nothing optional, empty source strings and metadata): what a list of
    /// workouts is capped with.
    public static let minWorkoutBytes = 30

    /// Reads a workout written by ``ByteWriter/writeWorkout(_:)``; lists are capped by `limits` and
    /// ``Workout/Limits``, an unknown activity type or event kind is ``ErrorCode/malformedPayload``.
    public mutating func readWorkout(_ limits: some FieldLimits) throws -> Workout {
        let uuid = try readUUID()
        let raw = try readVarint()
        guard let type = UInt16(exactly: raw).flatMap(WorkoutActivityType.init(rawValue:)) else {
            throw CodecError(.malformedPayload, "unknown workout activity type \(raw) before byte \(offset)")
        }
        let start = try readSignedVarint()
        let end = try readSignedVarint()
        let duration = try readSignedVarint()
        let totalFlags = try readByte()
        guard totalFlags & ~3 == 0 else {
            throw CodecError(.malformedPayload, "unknown workout total flags \(totalFlags) before byte \(offset)")
        }
        let energy = totalFlags & 1 != 0 ? try readTotal(limits) : nil
        let distance = totalFlags & 2 != 0 ? try readTotal(limits) : nil
        let source = try readSource(limits)
        let metadata = try readMetadataRow(limits)
        // An event takes at least 4 bytes, a statistic 5, a route 1.
        let eventCount = try readListCount("workout event", limits: limits, minBytes: 4)
        guard eventCount <= Workout.Limits.maxEvents else {
            throw CodecError(.malformedPayload, "\(eventCount) workout events; at most \(Workout.Limits.maxEvents)")
        }
        var events: [WorkoutEvent] = []
        events.reserveCapacity(eventCount)
        for _ in 0..<eventCount {
            let kindByte = try readByte()
            guard let kind = WorkoutEvent.Kind(rawValue: kindByte) else {
                throw CodecError(.malformedPayload, "unknown workout event type \(kindByte) before byte \(offset)")
            }
            events.append(
                WorkoutEvent(
                    kind: kind, date: try readSignedVarint(), duration: try readSignedVarint(),
                    metadata: try readMetadataRow(limits)))
        }
        let statisticCount = try readListCount("workout statistics", limits: limits, minBytes: 5)
        guard statisticCount <= Workout.Limits.maxStatistics else {
            throw CodecError(
                .malformedPayload, "\(statisticCount) workout statistics; at most \(Workout.Limits.maxStatistics)")
        }
        var statistics: [WorkoutStatistic] = []
        statistics.reserveCapacity(statisticCount)
        for _ in 0..<statisticCount {
            let statType = try readString(limits)
            let statStart = try readSignedVarint()
            let statEnd = try readSignedVarint()
            let flags = try readByte()
            guard flags & ~15 == 0 else {
                throw CodecError(.malformedPayload, "unknown workout statistics flags \(flags) before byte \(offset)")
            }
            var figures: [Double?] = []
            for bit in 0..<4 { figures.append(flags & (1 << bit) != 0 ? try readDouble() : nil) }
            statistics.append(
                WorkoutStatistic(
                    type: statType, start: statStart, end: statEnd, sum: figures[0], average: figures[1],
                    minimum: figures[2], maximum: figures[3], unit: try readString(limits)))
        }
        let routes = try readStrings("workout route", limits: limits)
        guard routes.count <= Workout.Limits.maxRoutes else {
            throw CodecError(.malformedPayload, "\(routes.count) workout routes; at most \(Workout.Limits.maxRoutes)")
        }
        return Workout(
            uuid: uuid, activityType: type, start: start, end: end, duration: duration, totalEnergyBurned: energy,
            totalDistance: distance, source: source, metadata: metadata, events: events, statistics: statistics,
            routes: routes)
    }

    private mutating func readTotal(_ limits: some FieldLimits) throws -> WorkoutTotal {
        WorkoutTotal(value: try readDouble(), unit: try readString(limits))
    }
}
