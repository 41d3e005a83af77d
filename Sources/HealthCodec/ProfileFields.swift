import HealthModel

// The byte layouts of characteristics and activity summaries (Protocol/PROTOCOL.md, "Characteristic" and
// "ActivitySummary"), shared by the protocol, the log and their snapshot files: every count and length is capped
// before anything is allocated.

/// Caps of the characteristic and activity summary fields.
public enum ProfileFieldLimits {
    /// Most characteristic entries in one message or record.
    public static let maxCharacteristics = 64
    /// Longest characteristic key or value, in UTF-8 bytes.
    public static let maxCharacteristicBytes = 256
    /// Most activity summaries in one message or record (over 100 years of days).
    public static let maxActivitySummaries = 40_000
}

extension ByteWriter {
    /// Appends characteristic entries: `varint n`, then `string key, string value` each (Protocol/PROTOCOL.md,
    /// "Characteristic").
    public mutating func writeCharacteristics(_ entries: [CharacteristicEntry]) {
        writeVarint(UInt64(entries.count))
        for entry in entries {
            writeString(entry.key)
            writeString(entry.value)
        }
    }

    /// Appends `summary` (Protocol/PROTOCOL.md, "ActivitySummary"): `svarint day`, `u8` presence bits, an `f64`
    /// per bit set in field order, `string` energy unit.
    public mutating func writeActivitySummary(_ summary: ActivitySummary) {
        writeSignedVarint(Int64(summary.day))
        let present = ActivitySummary.Field.allCases.filter { summary.values[$0] != nil }
        write(present.reduce(UInt8(0)) { $0 | $1.bit })
        for field in present { writeDouble(summary.values[field]!) }
        writeString(summary.activeEnergyBurnedUnit)
    }

    /// Appends `varint n`, then each summary.
    public mutating func writeActivitySummaries(_ summaries: [ActivitySummary]) {
        writeVarint(UInt64(summaries.count))
        for summary in summaries { writeActivitySummary(summary) }
    }
}

extension ByteReader {
    /// Reads characteristic entries as written (keys and values not checked), at most
    /// ``ProfileFieldLimits/maxCharacteristics``.
    public mutating func readCharacteristics() throws -> [CharacteristicEntry] {
        let count = try readListCount("characteristic", limits: FieldCaps.storage, minBytes: 2)
        guard count <= ProfileFieldLimits.maxCharacteristics else {
            throw CodecError(
                .malformedPayload,
                "\(count) characteristics before byte \(offset); at most \(ProfileFieldLimits.maxCharacteristics)")
        }
        var entries: [CharacteristicEntry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let key = try readString(limit: ProfileFieldLimits.maxCharacteristicBytes)
            let value = try readString(limit: ProfileFieldLimits.maxCharacteristicBytes)
            entries.append(CharacteristicEntry(key: key, value: value))
        }
        return entries
    }

    /// Reads one activity summary (its values not checked; ``ActivitySummary/validate()`` does).
    public mutating func readActivitySummary() throws -> ActivitySummary {
        let at = offset
        let day = try readSignedVarint()
        guard let day = Int(exactly: day), ActivitySummary.days.contains(day) else {
            throw CodecError(.malformedPayload, "activity summary day \(day) out of range at offset \(at)")
        }
        let present = try readByte()
        var values: [ActivitySummary.Field: Double] = [:]
        for field in ActivitySummary.Field.allCases where present & field.bit != 0 {
            values[field] = try readDouble()
        }
        let unit = try readString(limit: ActivitySummary.maxUnitLength)
        return ActivitySummary(day: day, values: values, activeEnergyBurnedUnit: unit)
    }

    /// Reads `varint n`, then n summaries, at most ``ProfileFieldLimits/maxActivitySummaries``.
    public mutating func readActivitySummaries() throws -> [ActivitySummary] {
        // A summary takes at least 3 bytes (day, presence bits, empty unit).
        let count = try readListCount("activity summary", limits: FieldCaps.storage, minBytes: 3)
        guard count <= ProfileFieldLimits.maxActivitySummaries else {
            throw CodecError(
                .malformedPayload,
                "\(count) activity summaries before byte \(offset); at most \(ProfileFieldLimits.maxActivitySummaries)"
            )
        }
        var summaries: [ActivitySummary] = []
        summaries.reserveCapacity(count)
        for _ in 0..<count { summaries.append(try readActivitySummary()) }
        return summaries
    }
}
