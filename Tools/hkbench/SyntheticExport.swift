import Foundation
import HealthCodec
import HealthModel

/// A large Apple Health export for `hkbench import`, shaped like a real one: the same
/// DOCTYPE and header, quantity `<Record>` lines with the same attributes (source, version, device description,
/// `-0400` dates) over five quantity types, and one sleep category record in a hundred.
///
/// Records follow each other a minute apart from 2016-01-01, so every one has distinct content (and UUID).
enum SyntheticExport {
    /// Type, unit and a value for row `i` of each quantity type the generator cycles through.
    static let kinds: [(type: String, unit: String, value: @Sendable (Int) -> String)] = [
        ("HKQuantityTypeIdentifierStepCount", "count", { String(20 + $0 % 977) }),
        ("HKQuantityTypeIdentifierDistanceWalkingRunning", "mi", { String(Double($0 % 9_973) / 10_000) }),
        ("HKQuantityTypeIdentifierFlightsClimbed", "count", { String(1 + $0 % 7) }),
        ("HKQuantityTypeIdentifierHeartRate", "count/min", { String(55 + $0 % 90) }),
        ("HKQuantityTypeIdentifierActiveEnergyBurned", "kcal", { String(Double($0 % 4_999) / 100) }),
    ]
    /// Samples per type the import stores, for `records` records in all: the quantity types', and one in a
    /// hundred records a `sleepAnalysis` category sample.
    static func sampleCounts(records: Int) -> [String: Int] {
        var counts: [String: Int] = [:]
        var quantity = 0
        for index in 0..<records {
            if index % 100 == 99 {
                counts["sleepAnalysis", default: 0] += 1
            } else {
                counts[short(kinds[quantity % kinds.count].type), default: 0] += 1
                quantity += 1
            }
        }
        return counts
    }

    /// `stepCount` for `HKQuantityTypeIdentifierStepCount`.
    static func short(_ type: String) -> String {
        let name = type.replacingOccurrences(of: "HKQuantityTypeIdentifier", with: "")
        return name.prefix(1).lowercased() + name.dropFirst()
    }

    /// The DOCTYPE and header every export starts with, up to the first record.
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- HealthKit Export Version: 7 -->
        <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary)*)>
        <!ATTLIST HealthData
          locale CDATA #REQUIRED
        >
        ]>
        <HealthData locale="en_US">
         <ExportDate value="2018-04-15 22:29:28 -0400"/>
         <Me HKCharacteristicTypeIdentifierDateOfBirth="" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexNotSet"/>

        """

    /// The export.xml text of `records` records.
    static func xml(records: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(records * 380 + 1024)
        out += Array(header.utf8)
        let device =
            "&lt;&lt;HKDevice: 0x1194d2a60&gt;, name:iPhone, manufacturer:Apple, model:iPhone, hardware:iPhone7,2, "
            + "software:10.3.1&gt;"
        // 2016-01-01T00:00:00-04:00.
        let first = 1_451_620_800
        var quantity = 0
        for index in 0..<records {
            let start = first + index * 60
            let startText = date(start)
            let endText = date(start + 45)
            let line: String
            if index % 100 == 99 {
                line =
                    " <Record type=\"HKCategoryTypeIdentifierSleepAnalysis\" sourceName=\"iPhone\" "
                    + "sourceVersion=\"10.3.1\" creationDate=\"\(endText)\" startDate=\"\(startText)\" "
                    + "endDate=\"\(endText)\" value=\"HKCategoryValueSleepAnalysisInBed\"/>\n"
            } else {
                let kind = kinds[quantity % kinds.count]
                line =
                    " <Record type=\"\(kind.type)\" sourceName=\"iPhone\" sourceVersion=\"10.3.1\" "
                    + "device=\"\(device)\" unit=\"\(kind.unit)\" creationDate=\"\(endText)\" "
                    + "startDate=\"\(startText)\" endDate=\"\(endText)\" value=\"\(kind.value(quantity))\"/>\n"
                quantity += 1
            }
            out += line.utf8
        }
        out += Array("</HealthData>\n".utf8)
        return out
    }

    /// `2016-01-01 00:00:00 -0400` for a Unix time, in a fixed whole-hour offset (default −04:00).
    static func date(_ unixSeconds: Int, offsetHours: Int = -4) -> String {
        let local = unixSeconds + offsetHours * 3600
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let seconds = local - days * 86_400
        let date = CivilCalendar.date(ofDay: days)
        let (year, month, day) = (date.year, date.month, date.day)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(seconds / 3600)):\(two(seconds % 3600 / 60)):"
            + "\(two(seconds % 60)) \(offsetHours < 0 ? "-" : "+")\(two(abs(offsetHours)))00"
    }

    /// A zip holding `xml` deflated as `apple_health_export/export.xml`, as the Health app writes it.
    static func zip(_ xml: [UInt8], level: Int = 6) -> [UInt8] {
        let name = Array("apple_health_export/export.xml".utf8)
        let payload = Zlib.deflate(xml, level: level, format: .raw)
        let crc = Zlib.crc32(xml)
        var out = ByteWriter()
        out.writeLE(UInt32(0x0403_4b50))  // local file header
        for field: UInt16 in [20, 0, 8, 0, 0] { out.writeLE(field) }  // version, flags, deflate, time, date
        out.writeLE(crc)
        out.writeLE(UInt32(payload.count))
        out.writeLE(UInt32(xml.count))
        out.writeLE(UInt16(name.count))
        out.writeLE(UInt16(0))
        out.write(bytes: name)
        out.write(bytes: payload)
        let directory = out.count
        out.writeLE(UInt32(0x0201_4b50))  // central directory entry
        for field: UInt16 in [20, 20, 0, 8, 0, 0] { out.writeLE(field) }
        out.writeLE(crc)
        out.writeLE(UInt32(payload.count))
        out.writeLE(UInt32(xml.count))
        for field: UInt16 in [UInt16(name.count), 0, 0, 0, 0] { out.writeLE(field) }
        out.writeLE(UInt32(0))  // external attributes
        out.writeLE(UInt32(0))  // local header offset
        out.write(bytes: name)
        let directorySize = out.count - directory
        out.writeLE(UInt32(0x0605_4b50))  // end of central directory
        for field: UInt16 in [0, 0, 1, 1] { out.writeLE(field) }
        out.writeLE(UInt32(directorySize))
        out.writeLE(UInt32(directory))
        out.writeLE(UInt16(0))
        return out.bytes
    }
}
