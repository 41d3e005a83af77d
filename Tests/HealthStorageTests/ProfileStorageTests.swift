import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthPosix
import Testing

@testable import HealthStorage

/// Characteristics and activity summaries in the log (record kinds 7 and 8), in their own snapshot files, and
/// through restarts.
@Suite(.serialized)
struct ProfileStorageTests {
    static let day0 = CivilCalendar.dayNumber(year: 2024, month: 1, day: 1)

    /// `count` days of summaries from `day0 + from`, each different.
    static func summaries(_ count: Int, from: Int = 0, stand: Double = 10) -> [ActivitySummary] {
        (from..<from + count).map { offset in
            ActivitySummary(
                day: day0 + offset,
                values: [
                    .activeEnergyBurned: 400 + Double(offset), .activeEnergyBurnedGoal: 500,
                    .appleExerciseTime: Double(offset % 60), .appleExerciseTimeGoal: 30,
                    .appleStandHours: stand, .appleStandHoursGoal: 12,
                ], activeEnergyBurnedUnit: "kcal")
        }
    }

    static func entry(_ key: String, _ value: String) -> CharacteristicEntry {
        CharacteristicEntry(key: key, value: value)
    }

    @Test("characteristics and activity summary records encode and decode to the same change; others are refused")
    func logRecords() throws {
        let changes: [LogChange] = [
            .characteristics(subject: "anna", [Self.entry("dateOfBirth", "1984-05-01"), Self.entry("bloodType", "")]),
            .activitySummaries(subject: "anna", Self.summaries(3)),
        ]
        #expect(changes.map(\.kind.rawValue) == [7, 8])
        for change in changes {
            #expect(try LogChange.decode(kind: change.kind.rawValue, payload: change.encodePayload()) == change)
            var truncated = try change.encodePayload()
            truncated.removeLast()
            #expect(throws: CodecError.self) { try LogChange.decode(kind: change.kind.rawValue, payload: truncated) }
        }
        var wrongType = ByteWriter()
        wrongType.writeString("anna")
        wrongType.writeString("stepCount")
        wrongType.writeVarint(0)
        #expect(throws: CodecError.self) { try LogChange.decode(kind: 7, payload: wrongType.bytes) }
        #expect(throws: CodecError.self) { try LogChange.decode(kind: 8, payload: wrongType.bytes) }
    }

    @Test("both snapshot files round-trip, and a flipped byte or a truncation is damage")
    func snapshotCodecs() throws {
        let store = HealthStore()
        try store.setCharacteristics(subject: "anna", [(.dateOfBirth, "1984-05-01"), (.biologicalSex, "female")])
        try store.setCharacteristics(subject: "ben", [(.fitzpatrickSkinType, "HKFitzpatrickSkinTypeIII")])
        try store.insertActivitySummaries(subject: "anna", Self.summaries(20))
        try store.insertActivitySummaries(subject: "ben", Self.summaries(2, from: 100))

        let (characteristics, _) = store.characteristicTable.image { 9 }
        let codec = SubjectTableSnapshotCodec.characteristics
        let bytes = codec.encode(characteristics, sequence: 9)
        let decoded = try codec.decode(bytes)
        #expect(decoded.sequence == 9 && decoded.image == characteristics)
        #expect(decoded.image["ben"] == [.fitzpatrickSkinType: "III"])

        let (summaries, _) = store.activitySummaryTable.image { 12 }
        let summaryCodec = SubjectTableSnapshotCodec.activitySummaries
        let summaryBytes = summaryCodec.encode(summaries, sequence: 12)
        let decodedSummaries = try summaryCodec.decode(summaryBytes)
        #expect(decodedSummaries.sequence == 12 && decodedSummaries.image == summaries)
        #expect(decodedSummaries.image["anna"]?.count == 20)

        for index in [0, 9, bytes.count / 2, bytes.count - 1] {
            var damaged = bytes
            damaged[index] ^= 0x40
            #expect(throws: CodecError.self) { try codec.decode(damaged) }
        }
        for index in [0, 17, summaryBytes.count / 2, summaryBytes.count - 1] {
            var damaged = summaryBytes
            damaged[index] ^= 0x40
            #expect(throws: CodecError.self) { try summaryCodec.decode(damaged) }
        }
        #expect(throws: CodecError.self) { try summaryCodec.decode(Array(summaryBytes.dropLast(5))) }
        // The other table's file is refused by its magic.
        #expect(throws: CodecError.self) { try codec.decode(summaryBytes) }
    }

    @Test("characteristics and summaries survive a stop without a snapshot (replayed) and one with a snapshot")
    func restarts() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        let set = try durable.setCharacteristics(
            subject: "anna",
            [Self.entry("dateOfBirth", "1984-05-01"), Self.entry("biologicalSex", "HKBiologicalSexFemale")])
        #expect(set.values == [.dateOfBirth: "1984-05-01", .biologicalSex: "female"])
        // The same values again change nothing and log nothing.
        try durable.setCharacteristics(subject: "anna", [Self.entry("biologicalSex", "female")])
        try durable.setCharacteristics(subject: "anna", [Self.entry("bloodType", "oPositive")])
        try durable.setCharacteristics(subject: "anna", [Self.entry("bloodType", "")])  // cleared
        #expect(try durable.insertActivitySummaries(subject: "anna", Self.summaries(10)) == 10)
        #expect(try durable.insertActivitySummaries(subject: "anna", Self.summaries(10)) == 0)  // not logged
        // Day 5 replaced with other values, day 10 new.
        #expect(try durable.insertActivitySummaries(subject: "anna", Self.summaries(2, from: 9, stand: 3)) == 2)
        let characteristics = durable.store.characteristics(subject: "anna")
        let summaries = try durable.store.activitySummaries(subject: "anna")
        #expect(characteristics.values == [.dateOfBirth: "1984-05-01", .biologicalSex: "female"])
        #expect(summaries.count == 11 && summaries[9][.appleStandHours] == 3)
        durable.close(snapshot: false)

        let (replayed, _) = try openStore(directory)
        #expect(replayed.recovery.replayedRecords == 5)
        #expect(replayed.store.characteristics(subject: "anna") == characteristics)
        #expect(try replayed.store.activitySummaries(subject: "anna") == summaries)
        replayed.close()  // a snapshot: characteristics-N.snap and activitySummary-N.snap in the manifest

        let files = try FileSystem.contentsOfDirectory(directory + "/snapshots")
        #expect(files.contains { $0.hasPrefix("characteristics-") && $0.hasSuffix(".snap") })
        #expect(files.contains { $0.hasPrefix("activitySummary-") && $0.hasSuffix(".snap") })
        let (restored, _) = try openStore(directory)
        #expect(restored.recovery.replayedRecords == 0)
        #expect(restored.store.characteristics(subject: "anna") == characteristics)
        #expect(try restored.store.activitySummaries(subject: "anna") == summaries)
        let week = try restored.store.activitySummaries(subject: "anna", from: Self.day0 + 2, through: Self.day0 + 8)
        #expect(week.map(\.day) == Array(Self.day0 + 2...Self.day0 + 8))
        // Clearing the last characteristic empties the table: the next snapshot names no characteristics file.
        try restored.setCharacteristics(
            subject: "anna", [Self.entry("dateOfBirth", ""), Self.entry("biologicalSex", "notSet")])
        restored.close()
        let after = try FileSystem.contentsOfDirectory(directory + "/snapshots")
        #expect(!after.contains { $0.hasPrefix("characteristics-") })
        let (reopened, _) = try openStore(directory)
        defer { reopened.close(snapshot: false) }
        #expect(reopened.store.characteristics(subject: "anna").isEmpty)
        #expect(try reopened.store.activitySummaries(subject: "anna") == summaries)
    }

    @Test("an invalid characteristic or summary is refused before anything is logged")
    func refusals() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        func code(_ body: () throws -> Void) -> UInt16? {
            do {
                try body()
                return nil
            } catch let error as HealthError {
                return error.code.rawValue
            } catch {
                return 0
            }
        }
        #expect(
            code { try durable.setCharacteristics(subject: "anna", [Self.entry("eyeColor", "blue")]) }
                == ErrorCode.invalidArgument.rawValue)
        #expect(
            code {
                try durable.setCharacteristics(
                    subject: "anna", [Self.entry("biologicalSex", "male"), Self.entry("dateOfBirth", "1984-02-30x")])
            } == ErrorCode.invalidArgument.rawValue)
        for (key, impossible) in [("dateOfBirth", "2023-02-29"), ("fitzpatrickSkinType", "banana")] {
            #expect(
                code {
                    try durable.setCharacteristics(
                        subject: "anna", [Self.entry("biologicalSex", "male"), Self.entry(key, impossible)])
                } == ErrorCode.invalidArgument.rawValue, "\(key)")
        }
        var negative = Self.summaries(2)
        negative[1].values[.appleExerciseTime] = -1
        #expect(
            code { try durable.insertActivitySummaries(subject: "anna", negative) } == ErrorCode.invalidSample.rawValue)
        var twice = Self.summaries(2)
        twice[1].day = twice[0].day
        #expect(
            code { try durable.insertActivitySummaries(subject: "anna", twice) } == ErrorCode.invalidArgument.rawValue)
        var unitless = Self.summaries(1)
        unitless[0].activeEnergyBurnedUnit = "km"
        #expect(
            code { try durable.insertActivitySummaries(subject: "anna", unitless) }
                == ErrorCode.invalidSample.rawValue)
        #expect(durable.store.characteristics(subject: "anna").isEmpty)
        #expect(try durable.store.activitySummaries(subject: "anna").isEmpty)
        durable.close(snapshot: false)
        let (replayed, _) = try openStore(directory)
        defer { replayed.close(snapshot: false) }
        #expect(replayed.recovery.replayedRecords == 0)
    }

    @Test("values an earlier version stored unchecked (2023-02-29, banana) are replayed and snapshotted as they are")
    func uncheckedValuesStayReadable() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        // Logged and applied as a version before the HealthKit check did: the form only.
        let earlier: [(key: CharacteristicKey, value: String?)] = [
            (.dateOfBirth, "2023-02-29"), (.fitzpatrickSkinType, "banana"),
        ]
        let entries = earlier.map { Self.entry($0.key.rawValue, $0.value!) }
        _ = try durable.logged(.characteristics(subject: "anna", entries)) { hook in
            try durable.store.setCharacteristics(subject: "anna", earlier, beforeApplying: hook)
        }
        let stored = durable.store.characteristics(subject: "anna")
        #expect(stored.values == [.dateOfBirth: "2023-02-29", .fitzpatrickSkinType: "banana"])
        durable.close(snapshot: false)
        let (replayed, _) = try openStore(directory)
        #expect(replayed.recovery.replayedRecords == 1)
        #expect(replayed.store.characteristics(subject: "anna") == stored)
        replayed.close()
        let (restored, _) = try openStore(directory)
        defer { restored.close(snapshot: false) }
        #expect(restored.recovery.replayedRecords == 0)
        #expect(restored.store.characteristics(subject: "anna") == stored)
    }
}
