import Foundation
import HealthModel

/// Correlations (HEALTHKIT.md §13): the shared correlation layout and the correlation snapshot file.
enum CorrelationHarnesses {
    /// A blood pressure reading with metadata, and a meal of two nutrients.
    static let correlations: [Correlation] = {
        let type = { (name: String) in QuantityType.all.first { $0.identifier == name }! }
        let uuid = { (text: String) in UUID(uuidString: text)! }
        return [
            Correlation(
                type: .bloodPressure, start: 1_700_000_000_000_000, end: 1_700_000_000_000_000,
                source: SourceInfo(name: "Cuff", version: "2.1"), metadata: ["HKWasUserEntered": .number(0)],
                members: [
                    CorrelationMember(
                        uuid: uuid("5A1F3C2E-0D4B-4E6A-9B7C-1D2E3F405162"), type: type("bloodPressureSystolic")),
                    CorrelationMember(
                        uuid: uuid("6B2A4D3F-1E5C-4F7B-8C8D-2E3F40516273"), type: type("bloodPressureDiastolic")),
                ]),
            Correlation(
                type: .food, start: 0, end: 3_600_000_000, source: SourceInfo(name: "Diary"),
                members: [
                    CorrelationMember(
                        uuid: uuid("7C3B5E40-2F6D-4A8C-9D9E-3F4051627384"), type: type("dietaryEnergyConsumed")),
                    CorrelationMember(uuid: uuid("8D4C6F51-3A7E-4B9D-8EAF-405162738495"), type: type("dietaryProtein")),
                ]),
        ]
    }()

    /// A correlation as the protocol and the log write it: if it decodes, its encoding decodes to the same bytes.
    static let correlation = ObjectHarnesses.layout(
        "correlation", "ByteReader.readCorrelation (the protocol's, log's and snapshot's layout); round trip",
        correlations)

    /// A correlation snapshot (CRC fixed when byte 0 is odd): re-encoded, restored or refused.
    static let snapshot = ObjectHarnesses.snapshot(
        "correlation-snapshot", "CorrelationSnapshotCodec.decode (CRC fixed when byte 0 is odd), re-encode, restore",
        correlations)
}
