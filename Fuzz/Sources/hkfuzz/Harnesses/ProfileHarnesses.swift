import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthStorage

/// Characteristics and activity summaries (HEALTHKIT.md §13): their shared field layouts and their snapshot files.
enum ProfileHarnesses {
    /// A full day, and one with only the stand hours.
    static let summaries: [ActivitySummary] = [
        ActivitySummary(
            day: 19_675,
            values: [
                .activeEnergyBurned: 512.25, .activeEnergyBurnedGoal: 600, .appleExerciseTime: 34,
                .appleExerciseTimeGoal: 30, .appleStandHours: 11, .appleStandHoursGoal: 12,
            ], activeEnergyBurnedUnit: "kcal"),
        ActivitySummary(day: 19_676, values: [.appleStandHours: 3]),
    ]

    /// Characteristic entries as the protocol and the log write them.
    static let entries = [
        CharacteristicEntry(key: "dateOfBirth", value: "1984-05-01"),
        CharacteristicEntry(key: "biologicalSex", value: "female"), CharacteristicEntry(key: "bloodType", value: ""),
    ]

    /// Byte 0 chooses the layout (even: characteristic entries, odd: activity summaries); if the rest decodes, its
    /// encoding decodes to the same bytes, and checking the values either passes or throws.
    static let fields = Harness(
        "profile-fields", "readCharacteristics / readActivitySummaries (protocol and log layouts); round trip",
        seeds: {
            var characteristics = ByteWriter()
            characteristics.writeCharacteristics(entries)
            var days = ByteWriter()
            days.writeActivitySummaries(summaries)
            return [[0] + characteristics.bytes, [1] + days.bytes]
        }
    ) { input in
        let control = input.byte()
        var reader = ByteReader(input.rest())
        if control & 1 == 0 {
            guard let entries = attempt({ try reader.readCharacteristics() }) else { return }
            var writer = ByteWriter()
            writer.writeCharacteristics(entries)
            var again = ByteReader(writer.bytes)
            require(attempt({ try again.readCharacteristics() }) == entries, "characteristics round trip differs")
            for entry in entries { _ = attempt { try entry.checked() } }
        } else {
            guard let decoded = attempt({ try reader.readActivitySummaries() }) else { return }
            var writer = ByteWriter()
            writer.writeActivitySummaries(decoded)
            var again = ByteReader(writer.bytes)
            guard let second = attempt({ try again.readActivitySummaries() }) else {
                require(false, "re-encoded activity summaries do not decode")
                return
            }
            var check = ByteWriter()
            check.writeActivitySummaries(second)
            require(check.bytes == writer.bytes, "activity summary round trip differs")
            for summary in decoded { _ = attempt { try summary.validate() } }
        }
    }

    /// Byte 0: bit 0 asks for the trailing CRC to be computed, bit 1 chooses the file (characteristics or activity
    /// summaries); a file that decodes must re-encode to one that decodes to the same bytes.
    static let snapshot = Harness(
        "profile-snapshot", "SubjectTableSnapshotCodec.decode of both files (CRC fixed when byte 0 is odd), re-encode",
        seeds: {
            let store = HealthStore()
            _ = try? store.setCharacteristics(
                subject: "anna", [(.dateOfBirth, "1984-05-01"), (.bloodType, "aNegative")])
            _ = try? store.insertActivitySummaries(subject: "anna", summaries)
            let characteristics = SubjectTableSnapshotCodec.characteristics.encode(
                store.characteristicTable.image { 4 }.0, sequence: 4)
            let days = SubjectTableSnapshotCodec.activitySummaries.encode(
                store.activitySummaryTable.image { 5 }.0, sequence: 5)
            return [[0] + characteristics, [1] + characteristics.dropLast(4), [2] + days, [3] + days.dropLast(4)]
        }
    ) { input in
        let control = input.byte()
        let bytes = control & 1 != 0 ? StorageHarnesses.withChecksum(input.rest()) : input.rest()
        if control & 2 == 0 {
            roundTrip(bytes, SubjectTableSnapshotCodec.characteristics)
        } else {
            roundTrip(bytes, SubjectTableSnapshotCodec.activitySummaries)
        }
    }

    private static func roundTrip<Key, Value>(_ bytes: [UInt8], _ codec: SubjectTableSnapshotCodec<Key, Value>) {
        guard let decoded = attempt({ try codec.decode(bytes) }) else { return }
        let encoded = codec.encode(decoded.image, sequence: decoded.sequence)
        guard let again = attempt({ try codec.decode(encoded) }) else {
            require(false, "a decoded \(codec.what) snapshot re-encodes to a file that does not decode")
            return
        }
        require(
            codec.encode(again.image, sequence: again.sequence) == encoded, "\(codec.what) snapshot round trip differs")
    }
}
