import Foundation
import HKQKit
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Characteristics and activity summaries through the real hkd and hkq (HEALTHKIT.md §13): set and read, a clean
/// restart (snapshot) and a kill -9 right after an acknowledgement (log replay), grants on the characteristics and
/// activitySummary types, the import of `<Me>` (the MIT export and a synthetic one) and of `<ActivitySummary>`
/// elements counted by an oracle over the XML, and `hkq activity --compare` against the records' daily sums.
@Suite("characteristics and activity summaries end to end", .serialized)
struct ProfileEndToEndTests {
    static func run(_ arguments: [String]) async -> (status: Int32, out: String, err: String) {
        await WorkoutEndToEndTests.run(arguments)
    }

    /// `hkq characteristics --format json` as key → value (unset keys left out).
    static func characteristics(_ hkd: TestServer, subject: String) async throws -> [String: String] {
        let shown = await run(hkd.hkqServer + ["--subject", subject, "--format", "json", "characteristics"])
        #expect(shown.status == 0, "\(shown.err)")
        var result: [String: String] = [:]
        for row in try WorkoutEndToEndTests.json(shown.out) {
            if let value = row["value"] as? String { result[row["key"] as! String] = value }
        }
        return result
    }

    @Test("hkq characteristics set and show; values survive a clean restart and a kill -9 after the acknowledgement")
    func setShowRestart() async throws {
        let hkd = try await TestServer()
        let set = await Self.run(
            hkd.hkqServer + [
                "--subject", "anna", "characteristics", "set", "dateOfBirth=1984-05-01",
                "biologicalSex=HKBiologicalSexFemale", "bloodType=oPositive", "fitzpatrickSkinType=III",
            ])
        #expect(set.status == 0, "\(set.err)")
        #expect(set.out.contains("biologicalSex") && set.out.contains("female"), "\(set.out)")
        let expected = [
            "dateOfBirth": "1984-05-01", "biologicalSex": "female", "bloodType": "oPositive",
            "fitzpatrickSkinType": "III",
        ]
        #expect(try await Self.characteristics(hkd, subject: "anna") == expected)
        #expect(try await Self.characteristics(hkd, subject: "ben").isEmpty)
        let csv = await Self.run(hkd.hkqServer + ["--subject", "anna", "--format", "csv", "characteristics"])
        #expect(csv.out.hasPrefix("key,value\ndateOfBirth,1984-05-01\n"), "\(csv.out)")

        // Bad arguments are refused before anything is sent, naming the key or the value.
        let badValue = await Self.run(hkd.hkqServer + ["characteristics", "set", "bloodType=purple"])
        #expect(badValue.status == 64 && badValue.err.contains("invalid value 'purple' for 'bloodType'"))
        #expect(badValue.err.contains("oPositive"), "\(badValue.err)")
        let badKey = await Self.run(hkd.hkqServer + ["characteristics", "set", "eyeColor=blue"])
        #expect(badKey.status == 64 && badKey.err.contains("unknown characteristic 'eyeColor'"), "\(badKey.err)")
        let noEquals = await Self.run(hkd.hkqServer + ["characteristics", "set", "female"])
        #expect(noEquals.status == 64 && noEquals.err.contains("expected key=value"), "\(noEquals.err)")

        #expect(await hkd.stop() == 0)  // a snapshot with the characteristics file
        let second = try await hkd.restart()
        #expect(try await Self.characteristics(second, subject: "anna") == expected)
        // Clear one, set another through the client; kill -9 as soon as it is acknowledged.
        let client = second.client()
        let after = try await client.setCharacteristics(
            [CharacteristicEntry(key: "bloodType", value: ""), CharacteristicEntry(key: "wheelchairUse", value: "no")],
            subject: "anna")
        client.close()
        #expect(after[.bloodType] == nil && after[.wheelchairUse] == "no")
        await second.kill()
        let third = try await second.restart()
        var changed = expected
        changed["bloodType"] = nil
        changed["wheelchairUse"] = "no"
        #expect(try await Self.characteristics(third, subject: "anna") == changed)
        await third.stop()
    }

    @Test("grants: read needs the read grant, setting the share grant (or an admin); other grants are refused")
    func grants() async throws {
        let hkd = try await TestServer()
        let admin = hkd.client()
        defer { admin.close() }
        try await admin.setCharacteristics(
            [CharacteristicEntry(key: "biologicalSex", value: "male")], subject: "anna")
        _ = try await admin.insertActivitySummaries(
            [ActivitySummary(day: CivilCalendar.day(parsing: "2024-01-01")!, values: [.appleStandHours: 9])],
            subject: "anna")
        func identity(_ name: String, _ grants: [TypeGrant]) async throws -> HealthClient {
            let created = try await admin.administer(
                .create(IdentitySpec(name: name, subjects: ["anna"], grants: grants)))
            return hkd.client(token: created.token)
        }
        func refused(_ body: () async throws -> Void) async -> Bool {
            do {
                try await body()
                return false
            } catch let error as HealthClientError {
                return error.code.rawValue == ErrorCode.forbidden.rawValue
            } catch {
                return false
            }
        }
        let steps = try await identity("steps", [TypeGrant(type: "stepCount", share: true, read: true)])
        defer { steps.close() }
        #expect(await refused { _ = try await steps.characteristics(subject: "anna") })
        #expect(await refused { _ = try await steps.activitySummaries(subject: "anna") })
        #expect(
            await refused {
                try await steps.setCharacteristics(
                    [CharacteristicEntry(key: "wheelchairUse", value: "no")], subject: "anna")
            })
        let reader = try await identity(
            "profile-reader",
            [
                TypeGrant(type: "characteristics", share: false, read: true),
                TypeGrant(type: "HKActivitySummaryTypeIdentifier", share: false, read: true),
            ])
        defer { reader.close() }
        #expect(try await reader.characteristics(subject: "anna")[.biologicalSex] == "male")
        #expect(try await reader.activitySummaries(subject: "anna").count == 1)
        #expect(
            await refused {
                try await reader.setCharacteristics(
                    [CharacteristicEntry(key: "wheelchairUse", value: "no")], subject: "anna")
            })
        #expect(await refused { _ = try await reader.insertActivitySummaries([], subject: "anna") })
        #expect(await refused { _ = try await reader.characteristics(subject: "ben") })  // not its subject
        let writer = try await identity(
            "profile-writer", [TypeGrant(type: "characteristics", share: true, read: false)])
        defer { writer.close() }
        try await writer.setCharacteristics([CharacteristicEntry(key: "wheelchairUse", value: "yes")], subject: "anna")
        #expect(await refused { _ = try await writer.characteristics(subject: "anna") })
        #expect(try await admin.characteristics(subject: "anna")[.wheelchairUse] == "yes")
        // HealthKit's authorization status (about sharing only) names these types too.
        let types = ["characteristics", "HKActivitySummaryTypeIdentifier", "HKWorkoutTypeIdentifier"]
        let statuses = [reader, writer, steps].map { client in
            { () async throws -> [String] in
                try await client.authorizationStatus(types, subject: "anna").map { "\($0.type) \($0.state)" }
            }
        }
        #expect(
            try await statuses[0]() == [
                "characteristics sharingDenied", "activitySummary sharingDenied", "workout notDetermined",
            ])
        #expect(
            try await statuses[1]() == [
                "characteristics sharingAuthorized", "activitySummary notDetermined", "workout notDetermined",
            ])
        #expect(
            try await statuses[2]() == [
                "characteristics notDetermined", "activitySummary notDetermined", "workout notDetermined",
            ])
        await hkd.stop()
    }

    @Test("hkq import stores the MIT export's <Me>; its activity summaries match an unzip | grep count")
    func importRealExport() async throws {
        let path = TestFixtures.realExportPath
        let hkd = try await TestServer()
        let imported = await Self.run(hkd.hkqServer + ["--subject", "rob", "--format", "json", "import", path])
        #expect(imported.status == 0, "\(imported.err)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(imported.out.utf8)) as? [String: Any])
        let counted = try await runTool([
            "sh", "-c", "unzip -p '\(path)' apple_health_export/export.xml | grep -c '<ActivitySummary'",
        ])
        // grep -c exits 1 when it counts none.
        #expect(counted.status == 0 || counted.status == 1, "\(counted.printed)")
        let oracle = try #require(Int(counted.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(summary["activitySummaries"] as? Int == oracle)
        #expect(summary["characteristics"] as? Int == 2)
        let skipped = try #require(summary["skipped"] as? [[String: Any]])
        #expect(Set(skipped.compactMap { $0["kind"] as? String }) == ["ExportDate", "HealthData locale"], "\(skipped)")
        // <Me HKCharacteristicTypeIdentifierDateOfBirth="1984-05-01" …BiologicalSex="HKBiologicalSexMale"
        // …BloodType="HKBloodTypeNotSet" …FitzpatrickSkinType="HKFitzpatrickSkinTypeNotSet"/>
        #expect(
            try await Self.characteristics(hkd, subject: "rob") == [
                "dateOfBirth": "1984-05-01", "biologicalSex": "male",
            ])
        let client = hkd.client()
        #expect(try await client.activitySummaries(subject: "rob").count == oracle)
        client.close()
        await hkd.stop()
    }

    @Test("activity summaries: imported as the XML says, the export day skipped, compared with our sums, after kill -9")
    func activity() async throws {
        let directory = try TestDirectory(prefix: "hk-activity")
        let xml = ActivityExport.document()
        let path = directory.appending("export.xml")
        try Data(xml.utf8).write(to: URL(fileURLWithPath: path))
        var oracle = ActivityExport.summaries(xml)
        let total = oracle.count
        oracle[ActivityExport.exportDay] = nil
        #expect(total == 41 && oracle.count == 40)

        let hkd = try await TestServer()
        let imported = await Self.run(hkd.hkqServer + ["--subject", "anna", "--format", "json", "import", path])
        #expect(imported.status == 0, "\(imported.err)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(imported.out.utf8)) as? [String: Any])
        #expect(summary["activitySummaries"] as? Int == oracle.count)
        #expect(summary["activitySummariesChanged"] as? Int == oracle.count)
        let skipped = try #require(summary["skipped"] as? [[String: Any]])
        #expect(
            Set(skipped.map { $0["kind"] as! String })
                == ["ExportDate", "HealthData locale", "ActivitySummary of the export day (incomplete)"], "\(skipped)")
        let again = await Self.run(hkd.hkqServer + ["--subject", "anna", "import", path])
        #expect(again.out.contains("40 activity summaries (0 new or changed, 40 already stored)"), "\(again.out)")
        #expect(
            try await Self.characteristics(hkd, subject: "anna") == [
                "dateOfBirth": "1990-03-04", "biologicalSex": "female", "wheelchairUse": "no",
            ])

        func expectDays(_ server: TestServer) async throws {
            let listed = await Self.run(
                server.hkqServer + ["--subject", "anna", "--format", "json", "activity", "--compare", "--tz", "UTC"])
            #expect(listed.status == 0, "\(listed.err)")
            let rows = try WorkoutEndToEndTests.json(listed.out)
            #expect(rows.map { $0["date"] as! String } == oracle.keys.sorted())
            let energy = ActivityExport.dailyRecords(xml, type: "HKQuantityTypeIdentifierActiveEnergyBurned")
            let exercise = ActivityExport.dailyRecords(xml, type: "HKQuantityTypeIdentifierAppleExerciseTime")
            let stood = ActivityExport.dailyRecords(xml, type: "HKCategoryTypeIdentifierAppleStandHour")
            var differing = 0
            for row in rows {
                let day = row["date"] as! String
                let apple = oracle[day]!
                for key in ["activeEnergyBurned", "activeEnergyBurnedGoal", "appleExerciseTime", "appleStandHours"] {
                    #expect(row[key] as? Double == apple[key], "\(day) \(key)")
                }
                #expect(row["activeEnergyBurnedUnit"] as? String == "kcal")
                #expect(row["ourActiveEnergyBurned"] as? Double == energy[day], "\(day)")
                #expect(row["ourAppleExerciseTime"] as? Double == exercise[day], "\(day)")
                #expect(row["ourAppleStandHours"] as? Double == stood[day], "\(day)")
                if row["ourActiveEnergyBurned"] as? Double != apple["activeEnergyBurned"] { differing += 1 }
            }
            #expect(differing == 5)  // every seventh day Apple counts 10 kcal more
        }
        try await expectDays(hkd)
        let week = await Self.run(
            hkd.hkqServer + [
                "--subject", "anna", "--format", "csv", "activity", "--from", "2024-01-29", "--through", "2024-02-04",
                "--tz", "UTC",
            ])
        #expect(week.status == 0, "\(week.err)")
        let lines = week.out.split(separator: "\n")
        #expect(lines.count == 8 && lines[1].hasPrefix("2024-01-29,") && lines[7].hasPrefix("2024-02-04,"))
        let table = await Self.run(hkd.hkqServer + ["--subject", "anna", "activity", "--tz", "UTC"])
        #expect(table.out.hasPrefix("DATE"), "\(table.out)")
        #expect(table.out.contains("EXERCISE GOAL") && !table.out.contains("OUR MOVE"), "\(table.out)")

        await hkd.kill()
        let second = try await hkd.restart()
        try await expectDays(second)
        #expect(await second.stop() == 0)
        let third = try await second.restart()
        try await expectDays(third)
        await third.stop()
    }
}
