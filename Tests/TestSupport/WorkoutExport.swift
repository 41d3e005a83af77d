import Foundation

/// A synthetic Apple Health export with workouts shaped like the export B: 60 `<Workout>` elements
/// (Running 46, Walking 13, MixedCardio 1) over several months, with `HKIndoorWorkout` metadata, pause/resume
/// events, `<WorkoutStatistics>`, route references, and heart-rate records from the Watch during every workout
/// (and from the phone, which are not the workout's). Seeded, so every run builds the same bytes.
public enum WorkoutExport {
    /// The Watch that records the workouts and their heart rate.
    public static let watchName = "Anna’s Apple Watch"
    /// The export's body elements (between `<Me>` and `</HealthData>`) and the document around them.
    public static func document(seed: UInt64 = 18) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary)*)>
        ]>
        <HealthData locale="en_US">
         <ExportDate value="2024-07-01 09:00:00 +0200"/>
         <Me HKCharacteristicTypeIdentifierDateOfBirth="1984-05-01" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale"/>
        \(body(seed: seed))
        </HealthData>

        """
    }

    /// The elements: per workout its heart-rate records first (as exports order records before workouts, here
    /// interleaved), then the workouts.
    public static func body(seed: UInt64) -> String {
        var random = SplitMix64(seed: seed)
        var records: [String] = []
        var workouts: [String] = []
        let kinds = Array(repeating: "Running", count: 46) + Array(repeating: "Walking", count: 13) + ["MixedCardio"]
        for (index, kind) in kinds.enumerated() {
            // Spread over January to June 2024, at most one workout a day, mornings at 07:xx local (+0200).
            let day = index * 3 + Int(random.next() % 3)
            let month = day / 30 + 1
            let dayOfMonth = day % 30 + 1
            let minute = Int(random.next() % 50)
            let minutes = 20 + Int(random.next() % 40)
            let start = String(format: "2024-%02d-%02d 07:%02d:00 +0200", month, dayOfMonth, minute)
            let endMinute = minute + minutes
            let end = String(
                format: "2024-%02d-%02d %02d:%02d:00 +0200", month, dayOfMonth, 7 + endMinute / 60, endMinute % 60)
            let active = Double(minutes) - Double(random.next() % 3)
            let km = kind == "Walking" ? Double(minutes) / 12 : Double(minutes) / 6
            let distance = (km * 1000).rounded() / 1000
            let energy = (Double(minutes) * (kind == "Walking" ? 4.5 : 10.5)).rounded()
            let indoor = random.next() % 4 == 0 ? 1 : 0
            var heartRates: [Int] = []
            for sample in 0..<(minutes / 5) {
                let at = minute + 2 + sample * 5
                let bpm = 120 + Int(random.next() % 60)
                heartRates.append(bpm)
                let time = String(format: "2024-%02d-%02d %02d:%02d:00 +0200", month, dayOfMonth, 7 + at / 60, at % 60)
                records.append(
                    """
                     <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="\(watchName)" sourceVersion="10.3" device="&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.3&gt;" unit="count/min" creationDate="\(time)" startDate="\(time)" endDate="\(time)" value="\(bpm)"/>
                    """)
            }
            // The phone's reading during the workout is not the workout's.
            records.append(
                """
                 <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Phone" unit="count/min" startDate="\(start)" endDate="\(start)" value="61"/>
                """)
            let pause = String(format: "2024-%02d-%02d 07:%02d:30 +0200", month, dayOfMonth, minute + 5)
            let resume = String(format: "2024-%02d-%02d 07:%02d:30 +0200", month, dayOfMonth, minute + 6)
            workouts.append(
                """
                 <Workout workoutActivityType="HKWorkoutActivityType\(kind)" duration="\(active)" durationUnit="min" totalDistance="\(distance)" totalDistanceUnit="km" totalEnergyBurned="\(energy)" totalEnergyBurnedUnit="kcal" sourceName="\(watchName)" sourceVersion="10.3" device="&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.3&gt;" creationDate="\(end)" startDate="\(start)" endDate="\(end)">
                  <MetadataEntry key="HKIndoorWorkout" value="\(indoor)"/>
                  <MetadataEntry key="HKTimeZone" value="Europe/Paris"/>
                  <WorkoutEvent type="HKWorkoutEventTypePause" date="\(pause)"/>
                  <WorkoutEvent type="HKWorkoutEventTypeResume" date="\(resume)"/>
                  <WorkoutEvent type="HKWorkoutEventTypeSegment" date="\(start)" duration="10" durationUnit="min"/>
                  <WorkoutStatistics type="HKQuantityTypeIdentifierHeartRate" startDate="\(start)" endDate="\(end)" average="\(Double(heartRates.reduce(0, +)) / Double(max(heartRates.count, 1)))" minimum="\(heartRates.min() ?? 0)" maximum="\(heartRates.max() ?? 0)" unit="count/min"/>
                  <WorkoutRoute sourceName="\(watchName)" sourceVersion="10.3" creationDate="\(end)" startDate="\(start)" endDate="\(end)">
                   <FileReference path="/workout-routes/route_\(index).gpx"/>
                  </WorkoutRoute>
                 </Workout>
                """)
        }
        return (records + workouts).joined(separator: "\n")
    }

    /// Per month (`2024-03`), what the document's `<Workout>` elements say, read with regular expressions only:
    /// the oracle the import is checked against.
    public struct MonthTotals: Hashable, Sendable {
        public var count = 0
        /// Minutes of `duration`.
        public var minutes = 0.0
        /// Kilometres of `totalDistance`.
        public var kilometres = 0.0
        public var byType: [String: Int] = [:]

        /// Nothing yet.
        public init() {}
    }

    /// The month totals of `xml` (months by the start date as written, in its own offset).
    public static func monthTotals(_ xml: String) -> [String: MonthTotals] {
        var totals: [String: MonthTotals] = [:]
        let workout = try! NSRegularExpression(pattern: "<Workout( [^>]*)>")
        func attribute(_ name: String, _ text: String) -> String? {
            let regex = try! NSRegularExpression(pattern: " \(name)=\"([^\"]*)\"")
            guard let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
                let range = Range(match.range(at: 1), in: text)
            else { return nil }
            return String(text[range])
        }
        for match in workout.matches(in: xml, range: NSRange(xml.startIndex..., in: xml)) {
            let text = String(xml[Range(match.range(at: 1), in: xml)!])
            let month = String(attribute("startDate", text)!.prefix(7))
            totals[month, default: MonthTotals()].count += 1
            totals[month]!.minutes += Double(attribute("duration", text)!)!
            totals[month]!.kilometres += Double(attribute("totalDistance", text)!)!
            totals[month]!.byType[attribute("workoutActivityType", text)!, default: 0] += 1
        }
        return totals
    }
}
