import Foundation
import TestSupport
import Testing

/// The rest of the corpus of real-world export quirks in Tests/Fixtures/exports, each imported with the real
/// `hkq` into the real `hkd` and its figures compared with Foundation's reading of the XML (``ExportOracle``).
@Suite("export corpus through hkq import", .serialized)
struct ExportCorpusTests {
    typealias Element = ExportOracle.Element

    /// A fresh hkd with the fixture `name` imported for anna; the import's status and JSON summary.
    static func imported(_ name: String) async throws -> (TestServer, Int32, [String: Any]) {
        let hkd = try await TestServer()
        let result = try await ExportQuirkTests.hkq(
            hkd, ["import", ExportQuirkTests.fixture(name), "--format", "json"])
        let summary = try #require(
            try ExportQuirkTests.json(result.out) as? [String: Any], "\(result.out)\(result.err)")
        return (hkd, result.status, summary)
    }

    /// The objects `hkq` prints for `arguments` (JSON, instants in epoch milliseconds).
    static func rows(_ hkd: TestServer, _ arguments: [String]) async throws -> [[String: Any]] {
        let result = try await ExportQuirkTests.hkq(hkd, arguments + ["--format", "json", "--time-format", "epoch-ms"])
        return try #require(try ExportQuirkTests.json(result.out) as? [[String: Any]], "\(result.out)\(result.err)")
    }

    /// The object `hkq stats TYPE --format json` prints.
    static func statistics(_ hkd: TestServer, _ type: String) async throws -> [String: Any] {
        let result = try await ExportQuirkTests.hkq(hkd, ["stats", type, "--format", "json"])
        return try #require(try ExportQuirkTests.json(result.out) as? [String: Any], "\(result.out)\(result.err)")
    }

    /// Milliseconds since 1970 of an export date as any phone writes it: digits of any script, a 12-hour clock
    /// with its marker after a space, a no-break space or U+202F. Read by Foundation's own formatter once the
    /// digits are ASCII (Unicode's digit values) and the spaces plain.
    static func milliseconds(_ text: String) throws -> Int64 {
        var plain = ""
        for character in text {
            if let digit = character.wholeNumberValue, character.isNumber {
                plain += String(digit)
            } else if character == "\u{202F}" || character == "\u{A0}" {
                plain += " "
            } else {
                plain.append(character)
            }
        }
        plain = plain.replacingOccurrences(of: "a.m.", with: "AM").replacingOccurrences(of: "p.m.", with: "PM")
            .replacingOccurrences(of: " am ", with: " AM ").replacingOccurrences(of: " pm ", with: " PM ")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        for format in ["yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd h:mm:ss a Z"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: plain) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        }
        throw CocoaError(.formatting, userInfo: [NSDebugDescriptionErrorKey: "not a date: \(text)"])
    }

    /// A record's start, end and value as a comparable line.
    static func line(_ start: Int64, _ end: Int64, _ value: String) -> String { "\(start) \(end) \(value)" }

    @Test("dates of phones with a 12-hour clock, Arabic or Persian digits and no-break spaces")
    func localizedDates() async throws {
        let records = try ExportOracle(path: ExportQuirkTests.fixture("localized-dates.xml")).elements(named: "Record")
        let expected = try Set(
            records.map {
                Self.line(
                    try Self.milliseconds($0.attributes["startDate"]!),
                    try Self.milliseconds($0.attributes["endDate"]!),
                    $0.attributes["value"]!)
            })
        #expect(expected.count == 7)
        let (hkd, status, summary) = try await Self.imported("localized-dates.xml")
        #expect(status == 0 && (summary["rejected"] as? [Any])?.isEmpty == true, "\(summary)")
        let stored = try await Self.rows(hkd, ["samples", "stepCount"])
        let got = Set(
            stored.map {
                Self.line(
                    ($0["start"] as? NSNumber)?.int64Value ?? 0, ($0["end"] as? NSNumber)?.int64Value ?? 0,
                    "\(($0["value"] as? NSNumber)?.intValue ?? -1)")
            })
        #expect(got == expected)
        await hkd.stop()
    }

    @Test("a night of iOS 16 sleep stages with HKTimeZone: every stage, its time zone, the night's figures")
    func sleepStages() async throws {
        let records = try ExportOracle(path: ExportQuirkTests.fixture("sleep-stages.xml")).elements(named: "Record")
        var seconds: [String: Double] = [:]
        for record in records {
            let value = record.attributes["value"]!.replacingOccurrences(of: "HKCategoryValueSleepAnalysis", with: "")
            let name = value.prefix(1).lowercased() + value.dropFirst()
            seconds[name, default: 0] += try #require(record.instant("endDate")) - record.instant("startDate")!
        }
        let (hkd, status, _) = try await Self.imported("sleep-stages.xml")
        #expect(status == 0)
        let stored = try await Self.rows(hkd, ["samples", "sleepAnalysis"])
        #expect(stored.count == records.count)
        #expect(
            stored.allSatisfy { ($0["metadata"] as? [String: Any])?["HKTimeZone"] as? String == "Australia/Sydney" })
        let nights = try await Self.rows(
            hkd, ["sleep", "--tz", "Australia/Sydney", "--from", "2024-09-20", "--to", "2024-09-22"])
        let night = try #require(nights.first { $0["night"] as? String == "2024-09-21" }, "\(nights)")
        let asleep = ["asleepCore", "asleepDeep", "asleepREM", "asleepUnspecified"].reduce(0) {
            $0 + (seconds[$1] ?? 0)
        }
        #expect(night["asleep"] as? Double == asleep, "\(night)")
        #expect(night["awake"] as? Double == seconds["awake"], "\(night)")
        #expect(night["asleepDeep"] as? Double == seconds["asleepDeep"], "\(night)")
        // In bed from the first record's start to the last one's end: the stages fill it.
        #expect(night["inBed"] as? Double == seconds.values.reduce(0, +), "\(night)")
        await hkd.stop()
    }

    @Test("source names with no-break spaces, curly quotes, accents, other scripts and entities stay as written")
    func sourceNames() async throws {
        let records = try ExportOracle(path: ExportQuirkTests.fixture("source-names.xml")).elements(named: "Record")
        let names = Set(records.compactMap { $0.attributes["sourceName"] })
        #expect(names.count == 5 && names.contains("O'Brien & Co") && names.contains("Anna’s\u{A0}Apple\u{A0}Watch"))
        let (hkd, status, _) = try await Self.imported("source-names.xml")
        #expect(status == 0)
        let sources = try await Self.rows(hkd, ["sources", "stepCount"])
        #expect(Set(sources.compactMap { $0["name"] as? String }) == names)
        for name in names {
            let expected = records.filter { $0.attributes["sourceName"] == name }.reduce(0) {
                $0 + Double($1.attributes["value"]!)!
            }
            let stored = try await Self.rows(hkd, ["samples", "stepCount", "--source", name])
            #expect(stored.reduce(0) { $0 + ($1["value"] as? Double ?? 0) } == expected, "\(name)")
        }
        await hkd.stop()
    }

    @Test("iOS 12 mindful sessions without a value are notApplicable; a sleep record without one is named")
    func categoryWithoutValue() async throws {
        let records = try ExportOracle(path: ExportQuirkTests.fixture("category-without-value.xml"))
            .elements(named: "Record")
        let mindful = records.filter { $0.attributes["type"] == "HKCategoryTypeIdentifierMindfulSession" }
        let (hkd, status, summary) = try await Self.imported("category-without-value.xml")
        #expect(status == 3, "the sleep record without a value is rejected")
        let rejected = try #require(summary["rejected"] as? [[String: Any]])
        #expect(rejected.count == 1 && rejected.first?["count"] as? Int == 1, "\(rejected)")
        #expect((rejected.first?["reason"] as? String)?.contains("sleepAnalysis") == true, "\(rejected)")
        let stored = try await Self.rows(hkd, ["samples", "mindfulSession"])
        #expect(stored.count == mindful.count)
        #expect(stored.allSatisfy { $0["value"] as? String == "notApplicable" }, "\(stored)")
        let minutes = try mindful.reduce(0.0) { $0 + (try #require($1.instant("endDate")) - $1.instant("startDate")!) }
        #expect(try await Self.statistics(hkd, "mindfulSession")["duration"] as? Double == minutes)
        await hkd.stop()
    }

    @Test("workouts whose totals are only WorkoutStatistics take them from there, every digit")
    func workoutStatisticsOnly() async throws {
        let workouts = try ExportOracle(path: ExportQuirkTests.fixture("workout-statistics-only.xml"))
            .elements(named: "Workout")
        func sum(_ workout: Element, _ type: String) -> Double? {
            workout.children.first { $0.attributes["type"] == "HKQuantityTypeIdentifier" + type }
                .flatMap { $0.attributes["sum"] }.flatMap(Double.init)
        }
        let (hkd, status, _) = try await Self.imported("workout-statistics-only.xml")
        #expect(status == 0)
        let stored = try await Self.rows(hkd, ["workouts"])
        #expect(stored.count == workouts.count)
        for (row, workout) in zip(stored, workouts) {
            #expect(row["distance"] as? Double == sum(workout, "DistanceWalkingRunning"), "\(row)")
            #expect(row["energy"] as? Double == sum(workout, "ActiveEnergyBurned"), "\(row)")
            #expect(row["duration"] as? Double == Double(workout.attributes["duration"]!), "\(row)")
        }
        await hkd.stop()
    }

    @Test("manual entries rank first by default: the day's merged steps hold them")
    func manualEntriesFirst() async throws {
        let records = try ExportOracle(path: ExportQuirkTests.fixture("manual-entries.xml")).elements(named: "Record")
        func manual(_ record: Element) -> Bool {
            record.children.contains { $0.attributes["key"] == "HKWasUserEntered" && $0.attributes["value"] == "1" }
        }
        // HEALTHKIT.md §8: manual entries, then the person's Apple devices, then other apps; the records of one
        // interval share it whole, so the highest-ranked one counts.
        func rank(_ record: Element) -> Int {
            manual(record) ? 0 : record.attributes["device"]?.contains("manufacturer:Apple") == true ? 1 : 2
        }
        let intervals = Dictionary(grouping: records) { $0.attributes["startDate"]! + $0.attributes["endDate"]! }
        let expected = intervals.values.reduce(0.0) { total, shared in
            total + Double(shared.min { rank($0) < rank($1) }!.attributes["value"]!)!
        }
        #expect(expected == 1200)
        let (hkd, status, _) = try await Self.imported("manual-entries.xml")
        #expect(status == 0)
        let sources = try await Self.rows(hkd, ["sources", "stepCount"])
        #expect(sources.first?["name"] as? String == "Health", "\(sources)")
        #expect(try await Self.statistics(hkd, "stepCount")["sum"] as? Double == expected)
        await hkd.stop()
    }

    @Test("characteristics no calendar or enumeration has are named and not stored; the rest imports")
    func impossibleCharacteristics() async throws {
        let (hkd, status, summary) = try await Self.imported("impossible-characteristics.xml")
        #expect(status == 3)
        let rejected = try #require(summary["rejected"] as? [[String: Any]])
        #expect(rejected.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 2, "\(rejected)")
        #expect(summary["inserted"] as? Int == 1)
        let shown = try await Self.rows(hkd, ["characteristics"])
        let values = Dictionary(
            uniqueKeysWithValues: shown.compactMap { row in
                (row["key"] as? String).map { ($0, row["value"] as? String) }
            })
        #expect(values["dateOfBirth"] ?? nil == nil && values["fitzpatrickSkinType"] ?? nil == nil, "\(shown)")
        await hkd.stop()
    }
}
