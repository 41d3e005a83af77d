import Foundation
import HealthModel

/// A large Apple Health export shaped like a person's real one rather than like an agent's stream, for
/// `hkbench export --shape real` and the capacity figures of imported data.
///
/// What real exports have and ``SyntheticExport`` lacks: two sources (an iPhone and a Watch, their software
/// version changing every few months, the device description with it), samples at irregular instants with
/// irregular durations, creation dates some seconds after the end, heart rate from the Watch with its motion
/// context as metadata, sleep with the time zone as metadata, and a third-party app's weight entries with
/// sync identifiers and versions. Drawn from a seeded ``SplitMix64``: the same records for the same seed.
struct RealShapedExport {
    /// One source as an export names it.
    struct Source {
        var name: String
        var model: String
        var hardware: String
        var bundle: String
    }

    static let phone = Source(name: "Anna’s iPhone", model: "iPhone", hardware: "iPhone12,1", bundle: "")
    static let watch = Source(name: "Anna’s Apple Watch", model: "Watch", hardware: "Watch6,2", bundle: "")

    /// The software version of month `month` since the first record: a new one every three months.
    static func version(month: Int, watch: Bool) -> String {
        let major = (watch ? 7 : 14) + month / 12
        return "\(major).\(month / 3 % 4)"
    }

    /// The export.xml text of `records` records drawn from `seed`, and how many samples of each type the import
    /// stores (its short identifier as key).
    static func xml(records: Int, seed: UInt64 = 42) -> (xml: [UInt8], samples: [String: Int]) {
        var random = SplitMix64(seed: seed)
        var out: [UInt8] = []
        out.reserveCapacity(records * 460 + 1024)
        out += Array(SyntheticExport.header.utf8)
        var counts: [String: Int] = [:]
        // 2019-01-01T00:00:00-05:00.
        var now = 1_546_318_800
        var weightVersion = 1
        for _ in 0..<records {
            now += 20 + Int(random.next() % 160)
            let month = (now - 1_546_318_800) / (30 * 86_400)
            let draw = random.next() % 1000
            let line: String
            if draw < 420 {
                // Heart rate from the Watch: a point sample with its motion context.
                let value = 52 + Int(random.next() % 90)
                let context = random.next() % 10 < 7 ? 1 : (random.next() % 2 == 0 ? 0 : 2)
                line = record(
                    "HKQuantityTypeIdentifierHeartRate", watch, month: month, unit: "count/min",
                    start: now, end: now, created: now + 300 + Int(random.next() % 600), value: "\(value)",
                    metadata: [("HKMetadataKeyHeartRateMotionContext", "\(context)")])
                counts["heartRate", default: 0] += 1
            } else if draw < 900 {
                // Steps or distance from either device, over an irregular few minutes.
                let fromWatch = random.next() % 2 == 0
                let length = 30 + Int(random.next() % 570)
                let steps = draw < 660
                let value =
                    steps ? "\(5 + random.next() % 900)" : String(format: "%.5g", Double(random.next() % 700) / 1000)
                line = record(
                    steps ? "HKQuantityTypeIdentifierStepCount" : "HKQuantityTypeIdentifierDistanceWalkingRunning",
                    fromWatch ? watch : phone, month: month, unit: steps ? "count" : "km", start: now - length,
                    end: now, created: now + Int(random.next() % 900), value: value, metadata: [])
                counts[steps ? "stepCount" : "distanceWalkingRunning", default: 0] += 1
            } else if draw < 990 {
                // Active energy from the Watch, a minute or so.
                line = record(
                    "HKQuantityTypeIdentifierActiveEnergyBurned", watch, month: month, unit: "kcal",
                    start: now - 60 - Int(random.next() % 30), end: now, created: now + 120,
                    value: String(format: "%.4g", Double(random.next() % 20_000) / 1000), metadata: [])
                counts["activeEnergyBurned", default: 0] += 1
            } else if draw < 998 {
                // A sleep stage from the Watch with the time zone.
                let stages = ["AsleepCore", "AsleepDeep", "AsleepREM", "Awake", "InBed"]
                let stage = stages[Int(random.next() % UInt64(stages.count))]
                line = record(
                    "HKCategoryTypeIdentifierSleepAnalysis", watch, month: month, unit: nil,
                    start: now - 300 - Int(random.next() % 3000), end: now, created: now + 3600,
                    value: "HKCategoryValueSleepAnalysis\(stage)",
                    metadata: [("HKTimeZone", "America/New_York")])
                counts["sleepAnalysis", default: 0] += 1
            } else {
                // A scale's app: weight with a sync identifier and version.
                weightVersion += 1
                let identifier = String(format: "%016llx", random.next())
                line = record(
                    "HKQuantityTypeIdentifierBodyMass",
                    Source(name: "Scale", model: "", hardware: "", bundle: "com.example.scale"), month: month,
                    unit: "kg", start: now, end: now, created: now + 5,
                    value: String(format: "%.1f", 60 + Double(random.next() % 200) / 10),
                    metadata: [
                        ("HKMetadataKeySyncIdentifier", identifier), ("HKMetadataKeySyncVersion", "\(weightVersion)"),
                    ])
                counts["bodyMass", default: 0] += 1
            }
            out += line.utf8
        }
        out += Array("</HealthData>\n".utf8)
        return (out, counts)
    }

    /// One `<Record>` line (with its metadata entries inside).
    static func record(
        _ type: String, _ source: Source, month: Int, unit: String?, start: Int, end: Int, created: Int,
        value: String, metadata: [(String, String)]
    ) -> String {
        let watch = source.model == "Watch"
        let version = source.model.isEmpty ? "2.3" : version(month: month, watch: watch)
        var text = " <Record type=\"\(type)\" sourceName=\"\(source.name)\" sourceVersion=\"\(version)\""
        if !source.model.isEmpty {
            text +=
                " device=\"&lt;&lt;HKDevice: 0x28\(String(month % 16, radix: 16))c1e2f0&gt;, name:\(source.model), "
                + "manufacturer:Apple Inc., model:\(source.model), hardware:\(source.hardware), "
                + "software:\(version)&gt;\""
        }
        if let unit { text += " unit=\"\(unit)\"" }
        text +=
            " creationDate=\"\(date(created))\" startDate=\"\(date(start))\" endDate=\"\(date(end))\" "
            + "value=\"\(value)\""
        guard !metadata.isEmpty else { return text + "/>\n" }
        text += ">\n"
        for (key, entry) in metadata { text += "  <MetadataEntry key=\"\(key)\" value=\"\(entry)\"/>\n" }
        return text + " </Record>\n"
    }

    /// An export's date in New York's standard offset (real exports print each instant in the offset of the
    /// phone's zone at export time, and the importer reads any).
    static func date(_ unixSeconds: Int) -> String {
        SyntheticExport.date(unixSeconds, offsetHours: -5)
    }
}
