import TestSupport
import Foundation
import HealthModel

@testable import HealthCodec

/// Kinds of value columns the random batches exercise.
enum ValueKind: CaseIterable, Sendable {
    case integers, fractional, specials
}

/// Reproducible random batches and field-by-field comparison (values by bit pattern, so NaN payloads count).
enum RandomBatches {
    static func make(
        seed: UInt64, rows: Int, sources sourceCount: Int, uuids: Bool, metadata: Bool, values kind: ValueKind,
        wildTimes: Bool = false
    ) -> SampleBatch {
        var random = SplitMix64(seed: seed)
        let sources = (0..<sourceCount).map { i in
            SourceInfo(
                name: "Source \(i) ⌚︎\u{00A0}é", bundleIdentifier: "com.example.\(i)",
                version: i % 2 == 0 ? "10.\(i)" : "",
                device: i % 3 == 0 ? "Watch6,\(i)" : "")
        }
        var batch = SampleBatch(
            batchID: random.next(), subject: "subject-\(seed)", typeIdentifier: "heartRate", unit: "count/min",
            sources: sources)
        var start = Int64.random(in: -Micros.day * 20_000...Micros.day * 20_000, using: &random)
        for row in 0..<rows {
            if wildTimes {
                start = Int64(bitPattern: random.next())
            } else {
                start &+=
                    Int64.random(in: 0...5, using: &random) == 0
                    ? Int64.random(in: -Micros.hour...Micros.day, using: &random) : Micros.minute
            }
            let end =
                wildTimes ? Int64(bitPattern: random.next()) : start + Int64.random(in: 0...Micros.hour, using: &random)
            batch.starts.append(start)
            batch.ends.append(end)
            batch.values.append(value(kind, row: row, using: &random))
            batch.sourceIndices.append(
                sourceCount == 0 ? 0 : UInt32(row / 50 % 2 == 0 ? 0 : Int.random(in: 0..<sourceCount, using: &random)))
        }
        if uuids { batch.uuids = (0..<rows).map { _ in UUID.random(using: &random) } }
        if metadata { batch.metadata = (0..<rows).map { _ in metadataRow(using: &random) } }
        return batch
    }

    static func value(_ kind: ValueKind, row: Int, using random: inout SplitMix64) -> Double {
        switch kind {
        case .integers:
            return row % 4 == 0 ? 0 : Double(Int64.random(in: -(1 << 53)...(1 << 53), using: &random) >> (row % 50))
        case .fractional:
            return row % 3 == 0 ? 72.5 : Double.random(in: -1e6...1e6, using: &random)
        case .specials:
            let specials: [Double] = [
                .nan, -.nan, Double(nan: 0x1234, signaling: false), Double(nan: 0x55, signaling: true), .infinity,
                -.infinity, -0.0, 0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 1e300, 0.1,
                Double(bitPattern: 0x7FF0_0000_0000_0001),
            ]
            return specials[Int.random(in: 0..<specials.count, using: &random)]
        }
    }

    static func metadataRow(using random: inout SplitMix64) -> [String: MetadataValue] {
        var row: [String: MetadataValue] = [:]
        for entry in 0..<Int.random(in: 0...4, using: &random) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: row[MetadataKey.syncIdentifier] = .string("sync-\(random.next() % 1000)")
            case 1: row["HKMetadataKey\(entry)"] = .number(Double.random(in: -1...1, using: &random))
            case 2: row[MetadataKey.timeZone + "Date"] = .date(Int64(bitPattern: random.next()))
            default: row["ünïcode key \(entry)"] = .quantity(Double(entry) + 0.25, unit: "km/h")
            }
        }
        return row
    }

    /// Records every difference between `a` and `b` (values compared by bit pattern).
    static func differences(_ a: SampleBatch, _ b: SampleBatch) -> [String] {
        var out: [String] = []
        if a.batchID != b.batchID { out.append("batchID") }
        if a.subject != b.subject || a.typeIdentifier != b.typeIdentifier || a.unit != b.unit { out.append("header") }
        if a.sources != b.sources { out.append("sources") }
        if a.starts != b.starts { out.append("starts") }
        if a.ends != b.ends { out.append("ends") }
        if a.values.map(\.bitPattern) != b.values.map(\.bitPattern) { out.append("values") }
        if a.sourceIndices != b.sourceIndices { out.append("sourceIndices") }
        if a.uuids != b.uuids { out.append("uuids") }
        if !metadataEqual(a.metadata, b.metadata) { out.append("metadata") }
        return out
    }

    private static func metadataEqual(_ a: [[String: MetadataValue]]?, _ b: [[String: MetadataValue]]?) -> Bool {
        // Compare numbers by bit pattern too, so a NaN number in metadata still counts as equal to itself.
        func canonical(_ rows: [[String: MetadataValue]]?) -> [[String: String]]? {
            rows?.map { row in
                row.mapValues { value in
                    switch value {
                    case .string(let s): "s:" + s
                    case .number(let n): "n:\(n.bitPattern)"
                    case .date(let d): "d:\(d)"
                    case .quantity(let n, let unit): "q:\(n.bitPattern):" + unit
                    }
                }
            }
        }
        return canonical(a) == canonical(b)
    }
}

extension UUID {
    static func random(using random: inout SplitMix64) -> UUID {
        let a = random.next()
        let b = random.next()
        return withUnsafeBytes(of: (a, b)) { UUID(uuid: $0.load(as: uuid_t.self)) }
    }
}
