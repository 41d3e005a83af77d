import Foundation

/// A synthetic Apple Health export with `<ActivitySummary>` elements (HEALTHKIT.md §13) and the Watch's records
/// they summarise: per day active energy (kcal), exercise minutes and stand hours (`appleStandHour` stood),
/// in UTC, with Apple's daily figures beside them (equal to the records' sums except on every seventh day, where
/// Apple's move is 10 kcal higher, as real summaries sometimes are). The export day's own summary is there too
/// (incomplete: the importer skips it). Seeded, so every run builds the same bytes; the oracles below read the
/// document with regular expressions only.
public enum ActivityExport {
    /// The first day summarised.
    public static let firstDay = "2024-01-01"
    /// The export's date (its summary is skipped).
    public static let exportDay = "2024-02-10"

    /// The whole document for `days` days from ``firstDay`` (at most 40).
    public static func document(seed: UInt64 = 18, days: Int = 40) -> String {
        var random = SplitMix64(seed: seed)
        var records: [String] = []
        var summaries: [String] = []
        for index in 0..<days {
            let day = String(format: "2024-%02d-%02d", index < 31 ? 1 : 2, index < 31 ? index + 1 : index - 30)
            var energy = 0
            var exercise = 0
            for hour in stride(from: 8, to: 20, by: 3) {
                let kcal = 20 + Int(random.next() % 80)
                let minutes = Int(random.next() % 15)
                energy += kcal
                exercise += minutes
                records.append(record("ActiveEnergyBurned", "kcal", day, hour, 10, "\(kcal)"))
                if minutes > 0 { records.append(record("AppleExerciseTime", "min", day, hour, minutes, "\(minutes)")) }
            }
            var stood = 0
            for hour in 7..<22 where random.next() % 3 != 0 {
                stood += 1
                records.append(
                    #" <Record type="HKCategoryTypeIdentifierAppleStandHour" sourceName="Watch" startDate="\#(day) \#(hour.padded):00:00 +0000" endDate="\#(day) \#((hour + 1).padded):00:00 +0000" value="HKCategoryValueAppleStandHourStood"/>"#
                )
            }
            let apple = index % 7 == 6 ? energy + 10 : energy
            summaries.append(
                #" <ActivitySummary dateComponents="\#(day)" activeEnergyBurned="\#(apple)" activeEnergyBurnedGoal="500" activeEnergyBurnedUnit="kcal" appleMoveTime="0" appleMoveTimeGoal="0" appleExerciseTime="\#(exercise)" appleExerciseTimeGoal="30" appleStandHours="\#(stood)" appleStandHoursGoal="12"/>"#
            )
        }
        summaries.append(
            #" <ActivitySummary dateComponents="\#(exportDay)" activeEnergyBurned="12" activeEnergyBurnedGoal="500" activeEnergyBurnedUnit="kcal" appleExerciseTime="0" appleExerciseTimeGoal="30" appleStandHours="1" appleStandHoursGoal="12"/>"#
        )
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE HealthData [
            <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary)*)>
            ]>
            <HealthData locale="en_US">
             <ExportDate value="\(exportDay) 09:00:00 +0000"/>
             <Me HKCharacteristicTypeIdentifierDateOfBirth="1990-03-04" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet" HKCharacteristicTypeIdentifierWheelchairUse="HKWheelchairUseNo"/>
            \(records.joined(separator: "\n"))
            \(summaries.joined(separator: "\n"))
            </HealthData>

            """
    }

    private static func record(
        _ type: String, _ unit: String, _ day: String, _ hour: Int, _ minutes: Int, _ value: String
    )
        -> String
    {
        #" <Record type="HKQuantityTypeIdentifier\#(type)" sourceName="Watch" unit="\#(unit)" startDate="\#(day) \#(hour.padded):00:00 +0000" endDate="\#(day) \#(hour.padded):\#(minutes.padded):00 +0000" value="\#(value)"/>"#
    }

    /// The `<ActivitySummary>` elements of `xml` by `dateComponents`, each with its numeric attributes.
    public static func summaries(_ xml: String) -> [String: [String: Double]] {
        var result: [String: [String: Double]] = [:]
        for element in matches("<ActivitySummary( [^>]*)/>", in: xml) {
            var values: [String: Double] = [:]
            var day = ""
            for attribute in matchGroups(" ([A-Za-z]+)=\"([^\"]*)\"", in: element) {
                if attribute[0] == "dateComponents" { day = attribute[1] }
                if let value = Double(attribute[1]) { values[attribute[0]] = value }
            }
            result[day] = values
        }
        return result
    }

    /// Per day (`YYYY-MM-DD` of the start date), the sum of the values of the records of `type`
    /// (`HKQuantityTypeIdentifierActiveEnergyBurned`), or for a category type the count of its records.
    public static func dailyRecords(_ xml: String, type: String) -> [String: Double] {
        var result: [String: Double] = [:]
        for record in matches("<Record type=\"\(type)\"([^>]*)/>", in: xml) {
            let day = String(matchGroups("startDate=\"([0-9-]{10})", in: record)[0][0])
            let value = Double(matchGroups(" value=\"([^\"]*)\"", in: record)[0][0]) ?? 1
            result[day, default: 0] += value
        }
        return result
    }

    private static func matches(_ pattern: String, in text: String) -> [String] {
        matchGroups(pattern, in: text).map { $0[0] }
    }

    /// The capture groups of every match of `pattern` in `text`.
    private static func matchGroups(_ pattern: String, in text: String) -> [[String]] {
        let regex = try! NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (1..<match.numberOfRanges).map { String(text[Range(match.range(at: $0), in: text)!]) }
        }
    }
}

extension Int {
    fileprivate var padded: String { self < 10 ? "0\(self)" : "\(self)" }
}
