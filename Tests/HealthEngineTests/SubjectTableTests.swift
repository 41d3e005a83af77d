import HealthModel
import Testing

@testable import HealthEngine

/// The per-subject tables of characteristics and activity summaries (HEALTHKIT.md §13).
@Suite struct SubjectTableTests {
    @Test("apply counts the keys that change, runs its hook only then, and clears; subjects stay apart")
    func applyAndClear() throws {
        let table = SubjectTable<Int, String>()
        var hooks = 0
        #expect(table.apply(subject: "anna", [(1, "a"), (2, "b")]) { hooks += 1 } == 2)
        #expect(table.apply(subject: "anna", [(1, "a")]) { hooks += 1 } == 0)  // as stored: nothing to log
        #expect(table.apply(subject: "anna", [(3, nil)]) { hooks += 1 } == 0)  // clearing what is not set
        #expect(table.apply(subject: "anna", [(1, "x"), (1, "a")]) { hooks += 1 } == 0)  // back to the same
        #expect(table.apply(subject: "anna", [(2, nil), (4, "d")]) { hooks += 1 } == 2)
        #expect(hooks == 2)
        #expect(table.entries(subject: "anna").map(\.key) == [1, 4])
        #expect(table.entries(subject: "anna", in: 2...9).map(\.value) == ["d"])
        #expect(table.entries(subject: "ben").isEmpty)
        try table.apply(subject: "ben", [(1, "b")])
        #expect(table.count == 3)
        try table.apply(subject: "ben", [(1, nil)])
        #expect(table.image { 0 }.0.keys.sorted() == ["anna"])  // an emptied subject is dropped
    }

    @Test("a hook that throws leaves the table as it was")
    func throwingHook() {
        struct Refused: Error {}
        let table = SubjectTable<Int, String>()
        try? table.apply(subject: "anna", [(1, "a")])
        #expect(throws: Refused.self) { try table.apply(subject: "anna", [(1, "b")]) { throw Refused() } }
        #expect(table.entries(subject: "anna").map(\.value) == ["a"])
    }

    @Test("the store normalizes characteristics and refuses a day twice or an invalid summary before changing")
    func store() throws {
        let store = HealthStore()
        let set = try store.setCharacteristics(
            subject: "anna", [(.bloodType, "HKBloodTypeABNegative"), (.fitzpatrickSkinType, "HKFitzpatrickSkinTypeIV")])
        #expect(set.values == [.bloodType: "abNegative", .fitzpatrickSkinType: "IV"])
        #expect(throws: HealthError.self) { try store.setCharacteristics(subject: "", [(.bloodType, "aPositive")]) }
        let day = CivilCalendar.day(parsing: "2024-02-29")!
        #expect(CivilCalendar.day(parsing: "2023-02-29") == nil && CivilCalendar.text(ofDay: day) == "2024-02-29")
        let summary = ActivitySummary(day: day, values: [.appleStandHours: 8])
        #expect(throws: HealthError.self) { try store.insertActivitySummaries(subject: "anna", [summary, summary]) }
        #expect(try store.activitySummaries(subject: "anna").isEmpty)
        #expect(try store.insertActivitySummaries(subject: "anna", [summary]) == 1)
        #expect(try store.activitySummaries(subject: "anna", from: day + 1).isEmpty)
        #expect(try store.activitySummaries(subject: "anna", from: day, through: day) == [summary])
    }
}
