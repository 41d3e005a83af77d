import Foundation
import HealthModel
import Testing

@testable import HealthImport

@Suite("Characteristics from <Me>")
struct CharacteristicsImportTests {
    static let me = """
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1984-05-01" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeAPositive" HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeIII" HKCharacteristicTypeIdentifierWheelchairUse="HKWheelchairUseNotSet" HKCharacteristicTypeIdentifierActivityMoveMode="HKActivityMoveModeActiveEnergy" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse=""/>
        """

    static func document(me: String) -> String {
        Fixtures.document("").replacingOccurrences(
            of: " <Me HKCharacteristicTypeIdentifierDateOfBirth=\"1984-05-01\"/>", with: me)
    }

    @Test("every characteristic of <Me> is read in short form; NotSet and empty values are not set")
    func readsMe() throws {
        let reader = try ExportReader(
            bytes: Data(Self.document(me: Self.me).utf8), name: "export.xml", subject: "me")
        while try reader.nextBatch() != nil {}
        let values = reader.characteristics.values
        #expect(
            values == [
                .dateOfBirth: "1984-05-01", .biologicalSex: "female", .bloodType: "aPositive",
                .fitzpatrickSkinType: "III", .activityMoveMode: "activeEnergy",
            ])
        #expect(reader.summary.characteristics == 5 && reader.summary.characteristicElements == 1)
        #expect(reader.summary.skipped["Me"] == nil)
        #expect(reader.summary.rejected.isEmpty)
    }

    @Test("an invalid characteristic value is rejected with the line of <Me>; the others are kept")
    func rejectsInvalid() throws {
        let me = """
             <Me HKCharacteristicTypeIdentifierDateOfBirth="1984-13-01" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexMale"/>
            """
        let reader = try ExportReader(bytes: Data(Self.document(me: me).utf8), name: "export.xml", subject: "me")
        while try reader.nextBatch() != nil {}
        #expect(reader.characteristics.values == [.biologicalSex: "male"])
        let rejection = try #require(reader.summary.rejected.first)
        #expect(rejection.reason == "dateOfBirth is not a valid value")
        #expect(rejection.count == 1)
    }

    @Test("impossible values (no such day, year 0, no such HealthKit value) are rejected with the line of <Me>")
    func rejectsImpossible() throws {
        let me = """
             <Me HKCharacteristicTypeIdentifierDateOfBirth="2023-02-29" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexMale" HKCharacteristicTypeIdentifierFitzpatrickSkinType="banana" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeCPositive" HKCharacteristicTypeIdentifierWheelchairUse="HKWheelchairUseYes"/>
            """
        let reader = try ExportReader(bytes: Data(Self.document(me: me).utf8), name: "export.xml", subject: "me")
        while try reader.nextBatch() != nil {}
        #expect(reader.characteristics.values == [.biologicalSex: "male", .wheelchairUse: "yes"])
        #expect(
            reader.summary.rejected.map(\.reason).sorted() == [
                "bloodType is not a valid value", "dateOfBirth is not a valid value",
                "fitzpatrickSkinType is not a valid value",
            ])
        #expect(reader.summary.rejected.allSatisfy { $0.firstLines == [12] }, "\(reader.summary.rejected)")
        let yearZero = me.replacingOccurrences(of: "2023-02-29", with: "0000-01-01")
        let again = try ExportReader(bytes: Data(Self.document(me: yearZero).utf8), name: "export.xml", subject: "me")
        while try again.nextBatch() != nil {}
        #expect(again.characteristics[.dateOfBirth] == nil)
        #expect(again.summary.rejected.contains { $0.reason == "dateOfBirth is not a valid value" })
    }

    @Test("values are normalized from the export's form or the short form; invalid ones throw invalidArgument")
    func normalization() throws {
        #expect(try Characteristics.normalized(.biologicalSex, "HKBiologicalSexOther") == "other")
        #expect(try Characteristics.normalized(.biologicalSex, "female") == "female")
        #expect(try Characteristics.normalized(.bloodType, "HKBloodTypeNotSet") == nil)
        #expect(try Characteristics.normalized(.wheelchairUse, "") == nil)
        #expect(try Characteristics.normalized(.fitzpatrickSkinType, "HKFitzpatrickSkinTypeVI") == "VI")
        #expect(try Characteristics.normalized(.dateOfBirth, "2001-02-03") == "2001-02-03")
        // Every HealthKit value, in the export's form, normalizes to the short form hkq offers.
        let exportForms: [CharacteristicKey: [String]] = [
            .biologicalSex: ["Female", "Male", "Other"],
            .bloodType: [
                "APositive", "ANegative", "BPositive", "BNegative", "ABPositive", "ABNegative", "OPositive",
                "ONegative",
            ],
            .fitzpatrickSkinType: ["I", "II", "III", "IV", "V", "VI"], .wheelchairUse: ["No", "Yes"],
            .activityMoveMode: ["ActiveEnergy", "AppleMoveTime"],
            .cardioFitnessMedicationsUse: ["None", "CalciumChannelBlocker", "BetaBlocker"],
        ]
        for (key, forms) in exportForms {
            let normalized = try forms.map { try Characteristics.normalized(key, key.valuePrefix! + $0) ?? "" }
            #expect(normalized == key.knownValues, "\(key)")
            #expect(try key.knownValues!.map { try Characteristics.normalized(key, $0) ?? "" } == key.knownValues)
        }
        for (key, bad) in [(CharacteristicKey.dateOfBirth, "2001-2-3"), (.bloodType, "A+"), (.wheelchairUse, "yes no")]
        {
            #expect(throws: HealthError.self) { try Characteristics.normalized(key, bad) }
            do {
                _ = try Characteristics.normalized(key, bad)
            } catch let error as HealthError {
                #expect(error.code.rawValue == ErrorCode.invalidArgument.rawValue)
            }
        }
        #expect(CharacteristicKey.biologicalSex.exportAttribute == "HKCharacteristicTypeIdentifierBiologicalSex")
        var characteristics = Characteristics()
        try characteristics.set(.bloodType, "oNegative")
        try characteristics.set(.bloodType, "notSet")
        #expect(characteristics.isEmpty)
    }
}
