import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthImport

/// `<Correlation>` elements of an export: kept as correlations naming the samples their member records are
/// imported as (once, from the top-level copies); broken ones rejected with their line.
struct CorrelationImportTests {
    static let time = "2024-02-01 08:00:00 +0100"

    static func member(_ type: String, _ value: String, unit: String = "mmHg") -> String {
        #"<Record type="HKQuantityTypeIdentifier\#(type)" sourceName="Cuff" unit="\#(unit)" startDate="\#(time)" endDate="\#(time)" value="\#(value)"/>"#
    }

    static func read(_ body: String) throws -> (correlations: [Correlation], rows: [Fixtures.Row], ImportSummary) {
        let reader = try ExportReader(bytes: Data(Fixtures.document(body).utf8), name: "export.xml", subject: "anna")
        var batches: [SampleBatch] = []
        while let batch = try reader.nextBatch() { batches.append(batch) }
        return (reader.takeCorrelations(), Fixtures.rows(batches), reader.summary)
    }

    @Test("a member with metadata and an element the importer does not keep names its top-level copy; counted once")
    func memberWithChildren() throws {
        let children = """
            <MetadataEntry key="HKWasUserEntered" value="1"/>
               <Annotation note="cuff on the left arm"><Detail level="2"/></Annotation>
            </Record>
            """
        func member(_ type: String, _ value: String) -> String {
            Self.member(type, value).replacingOccurrences(of: "/>", with: ">\n   ") + children
        }
        let pressure = [member("BloodPressureSystolic", "121"), member("BloodPressureDiastolic", "79")]
        let body = """
             <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" startDate="\(Self.time)" endDate="\(Self.time)">
              \(pressure.joined(separator: "\n  "))
             </Correlation>
            \(pressure.joined(separator: "\n"))
            """
        let (correlations, rows, summary) = try Self.read(body)
        #expect(summary.rejected.isEmpty, "\(summary.rejected)")
        let members = try #require(correlations.first).members.map(\.uuid)
        #expect(Set(members) == Set(rows.map(\.uuid)) && members.count == 2)
        #expect(summary.skipped["Annotation"] == 2, "once for each top-level record: \(summary.skipped)")
        #expect(rows.allSatisfy { $0.metadata == ["HKWasUserEntered": .number(1)] })
    }

    @Test("a blood pressure and a food correlation keep type, interval, source, metadata and their members' UUIDs")
    func kept() throws {
        let pressure = [Self.member("BloodPressureSystolic", "120"), Self.member("BloodPressureDiastolic", "80")]
        let meal = [
            Self.member("DietaryEnergyConsumed", "450", unit: "kcal"), Self.member("DietaryProtein", "21", unit: "g"),
        ]
        let body = """
             <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" sourceVersion="2.1" startDate="\(Self.time)" endDate="\(Self.time)">
              <MetadataEntry key="HKWasUserEntered" value="1"/>
              \(pressure.joined(separator: "\n  "))
             </Correlation>
             <Correlation type="HKCorrelationTypeIdentifierFood" sourceName="Cuff" startDate="\(Self.time)" endDate="\(Self.time)">
              <MetadataEntry key="HKFoodType" value="Lunch"/>
              \(meal.joined(separator: "\n  "))
             </Correlation>
            \((pressure + meal).joined(separator: "\n"))
            """
        let (correlations, rows, summary) = try Self.read(body)
        #expect(summary.correlations == 2 && summary.rejected.isEmpty && rows.count == 4)
        #expect(correlations.map(\.type) == [.bloodPressure, .food])
        let uuidOf = Dictionary(uniqueKeysWithValues: rows.map { ($0.type, $0.uuid) })
        let bp = try #require(correlations.first)
        #expect(bp.members.map(\.uuid) == [uuidOf["bloodPressureSystolic"], uuidOf["bloodPressureDiastolic"]])
        #expect(bp.metadata == ["HKWasUserEntered": .number(1)] && bp.source.version == "2.1")
        #expect(bp.start == Fixtures.instant(2024, 2, 1, 8, offsetHours: 1))
        // Named by the whole element, which holds more than the source, type and interval of `contentID`.
        let reread = try Self.read(body).correlations.first?.uuid
        #expect(bp.uuid != bp.contentID && bp.uuid == reread)
        let food = try #require(correlations.last)
        #expect(food.members.map(\.type.identifier) == ["dietaryEnergyConsumed", "dietaryProtein"])
        #expect(food.members.map(\.uuid) == [uuidOf["dietaryEnergyConsumed"], uuidOf["dietaryProtein"]])
        #expect(food.metadata == ["HKFoodType": .string("Lunch")])
        // The same export read again names the same correlations.
        #expect(try Self.read(body).correlations == correlations)
    }

    @Test("a correlation of an unknown type, without a date or with one member of a pair is rejected")
    func rejected() throws {
        let body = """
             <Correlation type="HKCorrelationTypeIdentifierLunch" sourceName="Cuff" startDate="\(Self.time)" endDate="\(Self.time)">
             </Correlation>
             <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" endDate="\(Self.time)"/>
             <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" startDate="\(Self.time)" endDate="\(Self.time)">
              \(Self.member("BloodPressureSystolic", "120"))
             </Correlation>
            """
        let (correlations, _, summary) = try Self.read(body)
        #expect(correlations.isEmpty && summary.correlations == 3)
        #expect(
            summary.rejected.map(\.reason) == [
                "unknown correlation type", "missing attribute \"startDate\" of a correlation",
                "correlation is not valid",
            ])
        #expect(summary.rejected.last?.example.contains("one systolic and one diastolic") == true)
    }
}
