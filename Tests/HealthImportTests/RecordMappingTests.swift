import Foundation
import HealthModel
import Testing

@testable import HealthImport

@Suite("Record mapping")
struct RecordMappingTests {
    static let start = "2017-01-21 15:53:00 -0400"
    static let startInstant = Fixtures.instant(2017, 1, 21, 15, 53, 0, offsetHours: -4)

    @Test("a quantity record becomes a sample with its unit, value, instants, source and metadata")
    func basic() throws {
        let record = Fixtures.record(
            type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", value: "72",
            extra:
                #" device="&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, manufacturer:Apple, model:Watch, hardware:Watch3,2, software:4.2&gt;""#,
            children: """
                  <MetadataEntry key="HKTimeZone" value="America/New_York"/>
                  <MetadataEntry key="HKMetadataKeyHeartRateMotionContext" value="1"/>
                  <MetadataEntry key="ratio" value="1.5e-3"/>
                  <MetadataEntry key="version" value="1.2.3"/>
                  <MetadataEntry key="empty" value=""/>
                """)
        let (batches, summary) = try Fixtures.importing(body: record)
        #expect(summary.imported == ["heartRate": 1])
        let batch = try #require(batches.first)
        #expect(batch.typeIdentifier == "heartRate" && batch.unit == "count/min" && batch.subject == "anna")
        let row = try #require(Fixtures.rows(batches).first)
        #expect(row.value == 72)
        #expect(row.start == Self.startInstant)
        #expect(row.end == Fixtures.instant(2017, 1, 21, 15, 58, 0, offsetHours: -4))
        #expect(row.source == SourceInfo(name: "iphone", version: "10.2", device: "Watch3,2"))
        #expect(
            row.metadata == [
                "HKTimeZone": .string("America/New_York"), "HKMetadataKeyHeartRateMotionContext": .number(1),
                "ratio": .number(0.0015), "version": .string("1.2.3"), "empty": .string(""),
            ])
    }

    @Test("types Apple spells irregularly (VO2Max, UVExposure) are imported, not skipped")
    func irregularIdentifiers() throws {
        let body =
            Fixtures.record(type: "HKQuantityTypeIdentifierVO2Max", unit: "mL/min·kg", value: "41.2")
            + Fixtures.record(type: "HKQuantityTypeIdentifierUVExposure", unit: "count", value: "3")
        let (batches, summary) = try Fixtures.importing(body: body)
        #expect(summary.imported == ["vo2Max": 1, "uvExposure": 1], "\(summary)")
        #expect(Set(batches.map(\.typeIdentifier)) == ["vo2Max", "uvExposure"])
    }

    @Test("exponent values and the old compact date format are read")
    func oldFormats() throws {
        let body = [
            Fixtures.record(
                type: "HKQuantityTypeIdentifierDistanceWalkingRunning", unit: "km", value: "1.5E-2",
                start: "20170121155300-0400", end: "20170121155800-0400"),
            Fixtures.record(value: "2e3", start: "20161231235959+0100", end: "20170101000000+0100"),
        ].joined(separator: "\n")
        let rows = Fixtures.rows(try Fixtures.importing(body: body).batches)
        #expect(rows.count == 2)
        #expect(rows[0].value == 15 && rows[0].unit == "m", "sent in the canonical unit")
        #expect(rows[0].start == Self.startInstant)
        #expect(rows[1].value == 2000)
        #expect(rows[1].start == Fixtures.instant(2016, 12, 31, 23, 59, 59, offsetHours: 1))
        #expect(rows[1].end == Fixtures.instant(2017, 1, 1, offsetHours: 1))
    }

    @Test("source names keep no-break spaces, raw or as references, and decode entities")
    func sourceNames() throws {
        let body = [
            Fixtures.record(value: "1", source: "Anna\u{A0}s Apple\u{A0}Watch"),
            Fixtures.record(value: "2", source: "Anna&#160;s Apple&#xA0;Watch"),
            Fixtures.record(value: "3", source: "Tom &amp; Jerry&apos;s &lt;phone&gt;"),
        ].joined(separator: "\n")
        let rows = Fixtures.rows(try Fixtures.importing(body: body).batches)
        #expect(
            rows.map(\.source.name) == [
                "Anna\u{A0}s Apple\u{A0}Watch", "Anna\u{A0}s Apple\u{A0}Watch", "Tom & Jerry's <phone>",
            ])
        // Same decoded name and content but a different value: different samples of one source.
        #expect(rows[0].uuid != rows[1].uuid)
    }

    @Test("records alternating between sources that differ only in version, device or its absence keep their own")
    func alternatingSources() throws {
        let watch = #" device="&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, model:Watch, hardware:Watch6,1&gt;""#
        let phone = #" device="&lt;&lt;HKDevice: 0x2&gt;, name:iPhone, model:iPhone, hardware:iPhone12,1&gt;""#
        var body: [String] = []
        for minute in 0..<6 {
            let start = "2017-01-21 15:\(10 + minute):00 -0400"
            let end = "2017-01-21 15:\(10 + minute):30 -0400"
            let extra = [watch, phone, ""][minute % 3]
            var record = Fixtures.record(value: "\(minute)", start: start, end: end, source: "Anna", extra: extra)
            if minute == 5 {
                record = record.replacingOccurrences(of: #"sourceVersion="10.2""#, with: #"sourceVersion="11""#)
            }
            body.append(record)
        }
        let rows = Fixtures.rows(try Fixtures.importing(body: body.joined(separator: "\n")).batches)
            .sorted { $0.value < $1.value }
        #expect(rows.map(\.source.device) == ["Watch6,1", "iPhone12,1", "", "Watch6,1", "iPhone12,1", ""])
        #expect(rows.map(\.source.version) == ["10.2", "10.2", "10.2", "10.2", "10.2", "11"])
    }

    @Test("the whole element names the sample: its spelling does not count, any other difference does")
    func identity() throws {
        let device = "&lt;&lt;HKDevice: 0x1193, name:Apple Watch, hardware:Watch6,1&gt;"
        let meta = "  <MetadataEntry key=\"HKTimeZone\" value=\"Europe/Copenhagen\"/>\n"
        let swapped = "  <MetadataEntry key=\"HKWasUserEntered\" value=\"1\"/>\n"
        let base = Fixtures.record(
            value: "10", source: "Anna\u{A0}Watch", extra: " device=\"\(device)\"", children: meta + swapped)
        let variants = [
            // Entities, the number's spelling, the device's object address, the order of attributes and of
            // metadata entries, and the offset an instant is written with.
            Fixtures.record(
                value: "10.0", source: "Anna&#xA0;Watch",
                extra: #" device="&lt;&lt;HKDevice: 0xFF00, name:Apple Watch, hardware:Watch6,1&gt;""#,
                children: swapped + meta),
            Fixtures.record(
                value: "10", source: "Anna\u{A0}Watch", extra: " device=\"\(device)\"", children: meta + swapped
            ).replacingOccurrences(of: "creationDate=\"2017-01-21 15:53:00 -0400\"", with: "")
                .replacingOccurrences(of: "<Record ", with: "<Record creationDate=\"2017-01-21 20:53:00 +0100\" "),
        ]
        let changed = [
            Fixtures.record(
                value: "11", source: "Anna\u{A0}Watch", extra: " device=\"\(device)\"", children: meta + swapped),
            Fixtures.record(
                value: "10", source: "Anna Watch", extra: " device=\"\(device)\"", children: meta + swapped),
            Fixtures.record(
                value: "10", start: "2017-01-21 15:53:01 -0400", source: "Anna\u{A0}Watch",
                extra: " device=\"\(device)\"", children: meta + swapped),
            Fixtures.record(
                value: "10", end: "2017-01-21 15:58:01 -0400", source: "Anna\u{A0}Watch",
                extra: " device=\"\(device)\"", children: meta + swapped),
            Fixtures.record(
                type: "HKQuantityTypeIdentifierFlightsClimbed", value: "10", source: "Anna\u{A0}Watch",
                extra: " device=\"\(device)\"", children: meta + swapped),
            // What the content identity of earlier releases left out: the device, the creation date, the
            // version, the metadata.
            Fixtures.record(value: "10", source: "Anna\u{A0}Watch", children: meta + swapped),
            Fixtures.record(
                value: "10", source: "Anna\u{A0}Watch", extra: " device=\"\(device)\"", children: meta + swapped
            ).replacingOccurrences(
                of: "creationDate=\"2017-01-21 15:53:00", with: "creationDate=\"2017-01-21 15:54:00"),
            Fixtures.record(
                value: "10", source: "Anna\u{A0}Watch", extra: " device=\"\(device)\"", children: meta + swapped
            ).replacingOccurrences(of: "sourceVersion=\"10.2\"", with: "sourceVersion=\"10.3\""),
            Fixtures.record(
                value: "10", source: "Anna\u{A0}Watch", extra: " device=\"\(device)\"", children: meta + swapped
            ).replacingOccurrences(of: "sourceVersion=\"10.2\"", with: "sourceVersion=\"\""),
            Fixtures.record(value: "10", source: "Anna\u{A0}Watch", extra: " device=\"\(device)\"", children: meta),
        ]
        func uuid(_ record: String) throws -> UUID {
            try #require(Fixtures.rows(Fixtures.importing(body: record).batches).first).uuid
        }
        let reference = try uuid(base)
        for variant in variants { #expect(try uuid(variant) == reference) }
        var seen: Set<UUID> = [reference]
        for other in changed { #expect(seen.insert(try uuid(other)).inserted) }
        // One value in two spellings of a unit, or in two units, is one sample (IdentityValue).
        #expect(try uuid(Fixtures.record(unit: "count", value: "10")) == uuid(Fixtures.record(unit: "()", value: "10")))
        let bodyMass = "HKQuantityTypeIdentifierBodyMass"
        #expect(
            try uuid(Fixtures.record(type: bodyMass, unit: "kg", value: "1"))
                == uuid(Fixtures.record(type: bodyMass, unit: "g", value: "1000")))
        #expect(
            try uuid(Fixtures.record(type: bodyMass, unit: "lb", value: "172.001"))
                != uuid(Fixtures.record(type: bodyMass, unit: "lb", value: "172.002")))
    }

    @Test("a record's element identity is pinned: the stored UUIDs of every import depend on it")
    func pinnedIdentity() throws {
        let record = Fixtures.record(
            value: "10", source: "Anna\u{A0}Watch",
            extra: #" device="&lt;&lt;HKDevice: 0x1193&gt;, name:Apple Watch, hardware:Watch6,1&gt;""#,
            children: "  <MetadataEntry key=\"HKTimeZone\" value=\"Europe/Copenhagen\"/>\n")
        let uuid = try #require(Fixtures.rows(Fixtures.importing(body: record).batches).first).uuid
        #expect(uuid.uuidString == Self.pinnedUUID, "Protocol/STORAGE.md, Content identity: \(uuid)")
    }

    static let pinnedUUID = "FF64975E-B933-8AEA-83E1-23695E0CF6D1"

    @Test("an attribute the importer does not read is counted by name and still tells records apart")
    func unreadAttribute() throws {
        let plain = try Fixtures.importing(body: Fixtures.record(value: "10"))
        let noted = try Fixtures.importing(body: Fixtures.record(value: "10", extra: #" note="left wrist""#))
        #expect(noted.summary.skipped["Record note"] == 1 && plain.summary.skipped["Record note"] == nil)
        #expect(Fixtures.rows(noted.batches).first?.uuid != Fixtures.rows(plain.batches).first?.uuid)
    }

    @Test("a metadata entry without its key or value is counted as skipped; the record imports")
    func incompleteMetadata() throws {
        let children = "  <MetadataEntry key=\"HKTimeZone\"/>\n  <MetadataEntry value=\"1\"/>\n"
        let (batches, summary) = try Fixtures.importing(body: Fixtures.record(value: "10", children: children))
        #expect(Fixtures.rows(batches).count == 1 && summary.rejected.isEmpty)
        #expect(summary.skipped["Record MetadataEntry without a key or value"] == 2, "\(summary.skipped)")
    }

    @Test("identical records in one batch are one sample, counted as identical rows")
    func identicalRecords() throws {
        let body = [Fixtures.record(value: "10"), Fixtures.record(value: "10"), Fixtures.record(value: "11")]
            .joined(separator: "\n")
        let (batches, summary) = try Fixtures.importing(body: body)
        #expect(Fixtures.rows(batches).map(\.value) == [10, 11])
        #expect(summary.imported == ["stepCount": 2])
        #expect(summary.identicalRows == 1)
    }

    @Test("percent samples keep the fraction, sent in %, whatever dimensionless unit they are written in")
    func percent() throws {
        let body = [
            Fixtures.record(type: "HKQuantityTypeIdentifierOxygenSaturation", unit: "%", value: "0.97"),
            Fixtures.record(
                type: "HKQuantityTypeIdentifierOxygenSaturation", unit: "count", value: "0.95",
                start: "2017-01-21 16:00:00 -0400", end: "2017-01-21 16:00:00 -0400"),
            Fixtures.record(type: "HKQuantityTypeIdentifierBodyFatPercentage", unit: "%", value: "0.2"),
        ].joined(separator: "\n")
        let (batches, summary) = try Fixtures.importing(body: body)
        #expect(summary.imported == ["oxygenSaturation": 2, "bodyFatPercentage": 1])
        #expect(batches.map(\.unit) == ["%", "%"])
        #expect(batches.map(\.typeIdentifier) == ["oxygenSaturation", "bodyFatPercentage"])
        #expect(batches[0].values == [0.97, 0.95])
        // The engine stores values in the canonical unit (%), so the stored value is the fraction unchanged.
        let type = try QuantityType.named(batches[0].typeIdentifier)
        #expect(try HealthUnit(parsing: batches[0].unit).convert(0.97, to: type.canonicalUnit) == 0.97)
    }

    @Test("records are grouped by type and sent in its canonical unit, rounded to 9 significant digits")
    func grouping() throws {
        let body = [
            Fixtures.record(type: "HKQuantityTypeIdentifierBodyMass", unit: "lb", value: "172"),
            Fixtures.record(type: "HKQuantityTypeIdentifierBodyMass", unit: "kg", value: "78"),
            Fixtures.record(type: "HKQuantityTypeIdentifierBodyMass", unit: "lb", value: "174"),
            Fixtures.record(value: "5"),
        ].joined(separator: "\n")
        let batches = try Fixtures.importing(body: body).batches
        #expect(
            batches.map { "\($0.typeIdentifier) \($0.unit) \($0.values)" } == [
                "bodyMass kg [78.0178876, 78.0, 78.9250724]", "stepCount count [5.0]",
            ])
    }

    @Test(
        "malformed records are rejected with their line and reason; the rest import",
        arguments: [
            (
                Fixtures.record(type: "HKQuantityTypeIdentifierStepCountt"),
                "unknown quantity type \"HKQuantityTypeIdentifierStepCountt\"",
                "did you mean \"HKQuantityTypeIdentifierStepCount\"?"
            ),
            (Fixtures.record(unit: "furlong"), "unknown unit \"furlong\"", "furlong"),
            (Fixtures.record(unit: "kg"), "unit \"kg\" is not compatible with stepCount (count)", "kg"),
            (Fixtures.record(unit: nil), "missing attribute \"unit\"", "unit"),
            (Fixtures.record(value: nil), "missing attribute \"value\"", "value"),
            (Fixtures.record(value: "abc"), "value is not a number", "value \"abc\" is not a number"),
            (Fixtures.record(value: "1,5"), "value is not a number", "\"1,5\""),
            (Fixtures.record(value: "0x10"), "value is not a number", "0x10"),
            (Fixtures.record(value: "inf"), "value is not a number", "inf"),
            (Fixtures.record(value: "1e999"), "value is not a number", "1e999"),
            (Fixtures.record(value: "-3"), "negative value for a cumulative type", "-3.0"),
            (Fixtures.record(start: "2017-13-01 10:00:00 -0400"), "startDate is not a date", "2017-13-01"),
            (Fixtures.record(start: "2017-02-29 10:00:00 -0400"), "startDate is not a date", "2017-02-29"),
            (Fixtures.record(start: "2017-01-21 24:00:00 -0400"), "startDate is not a date", "24:00"),
            (Fixtures.record(start: "2017-01-21 10:00:00"), "startDate is not a date", "10:00:00"),
            (Fixtures.record(start: "yesterday"), "startDate is not a date", "yesterday"),
            (Fixtures.record(end: "2017-01-21 15:52:59 -0400"), "ends before it starts", "15:52:59"),
            (Fixtures.record(end: "2017-01-21 10:00:00 -0400 "), "endDate is not a date", "endDate"),
            (
                Fixtures.record(source: "").replacingOccurrences(of: #" sourceName="""#, with: ""),
                "missing attribute \"sourceName\"", "sourceName"
            ),
            (
                Fixtures.record(type: "HKQuantityTypeIdentifierBodyMass", unit: "lb", value: "1e306"),
                "value out of range", "out of range"
            ),
            (
                Fixtures.record(
                    type: "HKCategoryTypeIdentifierSleepAnalysis", unit: nil, value: "HKCategoryValueSleepAnalysisNap"),
                "unknown sleepAnalysis value",
                "\"HKCategoryValueSleepAnalysisNap\" is not a value of sleepAnalysis (HKCategoryValueSleepAnalysis: inBed 0"
            ),
            (
                Fixtures.record(type: "HKCategoryTypeIdentifierSleepAnalysis", unit: nil, value: nil),
                "missing sleepAnalysis value",
                "missing attribute \"value\": sleepAnalysis takes one of HKCategoryValueSleepAnalysis: inBed 0"
            ),
            (
                Fixtures.record(type: "HKCategoryTypeIdentifierMenstrualFlow", unit: nil, value: nil),
                "missing menstrualFlow value", "HKCategoryValueVaginalBleeding: unspecified 1"
            ),
            (
                // notApplicable is one of two values here: the record must say which.
                Fixtures.record(type: "HKCategoryTypeIdentifierHeadphoneAudioExposureEvent", unit: nil, value: nil),
                "missing headphoneAudioExposureEvent value", "notApplicable 0, sevenDayLimit 1"
            ),
            (
                Fixtures.record(type: "HKCategoryTypeIdentifierSleepAnalysiss", unit: nil, value: "x"),
                "unknown category type \"HKCategoryTypeIdentifierSleepAnalysiss\"",
                "did you mean \"HKCategoryTypeIdentifierSleepAnalysis\"?"
            ),
        ])
    func rejected(record: String, reason: String, detail: String) throws {
        let good = Fixtures.record(value: "7", start: "2018-01-01 00:00:00 +0000", end: "2018-01-01 00:01:00 +0000")
        let body = [good, record, good.replacingOccurrences(of: "\"7\"", with: "\"8\"")].joined(separator: "\n")
        let (batches, summary) = try Fixtures.importing(body: body)
        #expect(Fixtures.rows(batches).map(\.value) == [7, 8])
        #expect(summary.recordsSeen == 3)
        #expect(summary.rejectedCount == 1)
        let report = try #require(summary.rejected.first)
        #expect(report.reason == reason)
        #expect(report.example.contains(detail), "\(report.example)")
        // The document's preamble takes 12 lines; the rejected record is the second of the body.
        #expect(report.firstLines == [14])
    }

    @Test("category records: every sleep value name, old and new, maps to its raw value; identities are stable")
    func categoryRecords() throws {
        let names = [
            "HKCategoryValueSleepAnalysisInBed", "HKCategoryValueSleepAnalysisAsleep",
            "HKCategoryValueSleepAnalysisAwake", "HKCategoryValueSleepAnalysisAsleepCore",
            "HKCategoryValueSleepAnalysisAsleepDeep", "HKCategoryValueSleepAnalysisAsleepREM",
            "HKCategoryValueSleepAnalysisAsleepUnspecified",
        ]
        let records = names.enumerated().map { index, name in
            Fixtures.record(
                type: "HKCategoryTypeIdentifierSleepAnalysis", unit: nil, value: name,
                start: "2017-01-21 0\(index):00:00 -0400", end: "2017-01-21 0\(index):30:00 -0400", source: "Watch")
        }
        let stand = Fixtures.record(
            type: "HKCategoryTypeIdentifierAppleStandHour", unit: nil, value: "HKCategoryValueAppleStandHourIdle")
        let body = (records + [stand]).joined(separator: "\n")
        let (batches, summary) = try Fixtures.importing(body: body)
        #expect(summary.imported == ["sleepAnalysis": 7, "appleStandHour": 1])
        #expect(summary.importedCategoryCount == 8)
        let sleep = try #require(batches.first { $0.typeIdentifier == "sleepAnalysis" })
        #expect(sleep.values == [0, 1, 2, 3, 4, 5, 1])
        #expect(sleep.unit == "")
        #expect(batches.first { $0.typeIdentifier == "appleStandHour" }?.values == [1])
        let (again, _) = try Fixtures.importing(body: body)
        #expect(again.map(\.uuids) == batches.map(\.uuids))
    }

    @Test("a record of a not-applicable category type without a value (iOS 12 mindful sessions) is notApplicable")
    func categoryWithoutValue() throws {
        let types = [
            "MindfulSession", "HighHeartRateEvent", "IrregularHeartRhythmEvent", "ToothbrushingEvent",
            "HandwashingEvent",
        ]
        let absent = types.map { Fixtures.record(type: "HKCategoryTypeIdentifier\($0)", unit: nil, value: nil) }
        let (batches, summary) = try Fixtures.importing(body: absent.joined(separator: "\n"))
        #expect(summary.rejected.isEmpty, "\(summary.rejected)")
        #expect(summary.importedCategoryCount == types.count)
        #expect(Set(batches.map(\.typeIdentifier)) == Set(types.map { $0.prefix(1).lowercased() + $0.dropFirst() }))
        #expect(batches.allSatisfy { $0.values == [0] && $0.unit == "" })
        // The same sample as one that names the value: one identity, so a later export adds nothing.
        let named = Fixtures.record(
            type: "HKCategoryTypeIdentifierMindfulSession", unit: nil, value: "HKCategoryValueNotApplicable")
        let (written, _) = try Fixtures.importing(body: named)
        #expect(written.map(\.uuids) == [try #require(batches.first { $0.typeIdentifier == "mindfulSession" }).uuids])
    }

    @Test("rejections are grouped by reason with the first few lines, and stay bounded")
    func rejectionBounds() throws {
        var records: [String] = []
        for i in 0..<10 { records.append(Fixtures.record(value: "x\(i)")) }
        for i in 0..<100 { records.append(Fixtures.record(unit: "unit\(i)")) }
        let (_, summary) = try Fixtures.importing(body: records.joined(separator: "\n"))
        #expect(summary.rejectedCount == 110)
        #expect(summary.rejected.count == ImportSummary.maxKinds + 1)
        let notNumbers = try #require(summary.rejected.first)
        #expect(notNumbers.reason == "value is not a number" && notNumbers.count == 10)
        #expect(notNumbers.firstLines == [13, 14, 15, 16, 17])
        #expect(notNumbers.example == "value \"x0\" is not a number")
        let other = try #require(summary.rejected.last)
        #expect(other.reason == ImportSummary.otherKind)
        #expect(other.count == 110 - 10 - (ImportSummary.maxKinds - 1))
    }

    @Test(
        "other elements and non-quantity records are counted as skipped; Correlation members count once; workouts are kept"
    )
    func skipped() throws {
        let systolic = Fixtures.record(
            type: "HKQuantityTypeIdentifierBloodPressureSystolic", unit: "mmHg", value: "120")
        let diastolic = Fixtures.record(
            type: "HKQuantityTypeIdentifierBloodPressureDiastolic", unit: "mmHg", value: "80")
        let body = """
             <Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="cuff" startDate="\(Self.start)" endDate="\(Self.start)">
              <MetadataEntry key="HKWasUserEntered" value="1"/>
             \(systolic)
             \(diastolic)
             </Correlation>
            \(systolic)
            \(diastolic)
            \(Fixtures.record(type: "HKCategoryTypeIdentifierSleepAnalysis", unit: nil, value: "HKCategoryValueSleepAnalysisInBed"))
            \(Fixtures.record(type: "HKCategoryTypeIdentifierSleepAnalysis", unit: nil, value: "HKCategoryValueSleepAnalysisAsleep"))
            \(Fixtures.record(type: "HKDataTypeSleepDurationGoal", unit: "hr", value: "8"))
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" sourceName="w" startDate="\(Self.start)" endDate="\(Self.start)">
              <WorkoutEvent type="HKWorkoutEventTypePause" date="\(Self.start)"/>
              <WorkoutRoute sourceName="w" startDate="\(Self.start)" endDate="\(Self.start)">
               <Location date="\(Self.start)" latitude="1" longitude="2" altitude="3" horizontalAccuracy="1" verticalAccuracy="1" course="0" speed="1"/>
              </WorkoutRoute>
             </Workout>
             <ActivitySummary dateComponents="2017-01-21" activeEnergyBurned="300"/>
             <ClinicalRecord type="HKClinicalTypeIdentifierLabResultRecord" sourceName="clinic"/>
            \(Fixtures.record(type: "HKQuantityTypeIdentifierHeartRateVariabilitySDNN", unit: "ms", value: "45", children: """
                  <HeartRateVariabilityMetadataList>
                   <InstantaneousBeatsPerMinute bpm="60" time="3:53:00.00 PM"/>
                  </HeartRateVariabilityMetadataList>
                """))
            """
        let (batches, summary) = try Fixtures.importing(body: body)
        #expect(
            summary.imported == [
                "bloodPressureSystolic": 1, "bloodPressureDiastolic": 1, "heartRateVariabilitySDNN": 1,
                "sleepAnalysis": 2,
            ])
        #expect(
            summary.skipped == [
                "ExportDate": 1, "HKDataTypeSleepDurationGoal": 1, "ClinicalRecord": 1,
                "HeartRateVariabilityMetadataList": 1, "HealthData locale": 1,
                // What a route keeps is its points and file; a point does not keep its accuracies.
                "WorkoutRoute sourceName": 1, "WorkoutRoute startDate": 1, "WorkoutRoute endDate": 1,
                "Location horizontalAccuracy": 1, "Location verticalAccuracy": 1,
            ])
        #expect(summary.workouts == 1 && summary.correlations == 1 && summary.activitySummaries == 1)
        #expect(summary.characteristicElements == 1 && summary.characteristics == 1)
        #expect(summary.recordsSeen == 6)
        #expect(summary.rejected.isEmpty)
        #expect(Fixtures.rows(batches).allSatisfy { $0.metadata.isEmpty })
    }

    @Test("skipped kinds stay bounded however many distinct elements a file holds")
    func skippedBounds() throws {
        let body = (0..<100).map { " <Extra\($0)/>" }.joined(separator: "\n")
        let summary = try Fixtures.importing(body: body).summary
        #expect(summary.skipped.count == ImportSummary.maxKinds + 1)
        // The root's locale, ExportDate and the 100 extras (<Me> is read, not skipped).
        #expect(summary.skippedCount == 102)
        #expect(summary.skipped[ImportSummary.otherKind] == 102 - ImportSummary.maxKinds)
    }

    @Test("broken XML stops the import with the line; a bad entity too")
    func brokenXML() throws {
        let unclosed = Fixtures.document(Fixtures.record(children: "  <MetadataEntry key=\"a\" value=\"b\">"))
        let error = Fixtures.importError(Array(unclosed.utf8), name: "export.xml")
        #expect(error?.code == .malformedPayload)
        #expect(
            error?.message.contains(
                #""export.xml": malformed XML on line 15: </Record> does not close <MetadataEntry> opened on line 14"#)
                == true, "\(String(describing: error))")

        let entity = Fixtures.document(Fixtures.record(source: "Tom &amp Jerry"))
        let entityError = Fixtures.importError(Fixtures.zip(entity))
        #expect(
            entityError?.message.contains("malformed XML on line 13: bad reference \"&amp Jerry\"") == true,
            "\(String(describing: entityError))")
    }
}
