import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthImport

@Suite("Activity summaries from <ActivitySummary>")
struct ActivitySummaryImportTests {
    static func read(_ xml: String) throws -> (summaries: [ActivitySummary], summary: ImportSummary) {
        let reader = try ExportReader(bytes: Data(xml.utf8), name: "export.xml", subject: "me")
        while try reader.nextBatch() != nil {}
        return (reader.takeActivitySummaries(), reader.summary)
    }

    @Test("every summary but the export day's is read as the XML says (a regex oracle), in file order")
    func synthetic() throws {
        let xml = ActivityExport.document(seed: 7, days: 33)
        var oracle = ActivityExport.summaries(xml)
        #expect(oracle.removeValue(forKey: ActivityExport.exportDay) != nil)
        let (summaries, summary) = try Self.read(xml)
        #expect(summaries.count == oracle.count && summary.activitySummaries == oracle.count)
        #expect(summary.skipped[ImportSummary.incompleteActivitySummary] == 1)
        #expect(summary.skipped["ActivitySummary"] == nil && summary.rejected.isEmpty)
        #expect(summaries.map(\.dayText) == oracle.keys.sorted())
        for day in summaries {
            let expected = try #require(oracle[day.dayText])
            #expect(Dictionary(uniqueKeysWithValues: day.values.map { ($0.key.rawValue, $0.value) }) == expected)
            #expect(day.activeEnergyBurnedUnit == "kcal")
        }
    }

    @Test("a summary without a date, with a bad date or a negative value is rejected with its line")
    func rejections() throws {
        let body = """
             <ActivitySummary dateComponents="2017-01-20" appleStandHours="9" appleStandHoursGoal="12"/>
             <ActivitySummary activeEnergyBurned="300"/>
             <ActivitySummary dateComponents="2017-02-30" activeEnergyBurned="300"/>
             <ActivitySummary dateComponents="2017-01-22" appleExerciseTime="-4"/>
             <ActivitySummary dateComponents="2017-01-23" activeEnergyBurned="300" activeEnergyBurnedUnit="km"/>
             <ActivitySummary dateComponents="2018-04-15" appleStandHours="2"/>
            """
        let (summaries, summary) = try Self.read(Fixtures.document(body))
        #expect(summaries.map(\.dayText) == ["2017-01-20"])
        #expect(summaries.first?.activeEnergyBurnedUnit == "")
        #expect(
            summary.rejected.map(\.reason) == [
                "ActivitySummary without dateComponents", "ActivitySummary dateComponents is not a date",
                "ActivitySummary appleExerciseTime is not a number ≥ 0", "ActivitySummary is not valid",
            ])
        let lines = summary.rejected.flatMap(\.firstLines)
        #expect(lines == lines.sorted() && Set(lines).count == 4)
        // The export is dated 2018-04-15: that day's summary is incomplete.
        #expect(summary.skipped[ImportSummary.incompleteActivitySummary] == 1)
    }
}
