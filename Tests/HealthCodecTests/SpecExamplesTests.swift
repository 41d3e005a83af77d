import Foundation
import HealthModel
import Testing

@testable import HealthCodec

/// Keeps Protocol/SAMPLE-BATCH.md and the codec in step: each example's bytes in the spec must be exactly what the
/// encoder writes for the batch below, and must decode back to it.
@Suite("SAMPLE-BATCH.md examples")
struct SpecExamplesTests {
    static let examples: [String: SampleBatch] = [
        "minute-steps": SampleBatch(
            batchID: 0x0102_0304_0506_0708, subject: "anna", typeIdentifier: "stepCount", unit: "count",
            sources: [SourceInfo(name: "Watch", bundleIdentifier: "com.apple", version: "10.4", device: "Watch6,2")],
            starts: [1_577_836_800_000_000, 1_577_836_860_000_000, 1_577_836_920_000_000],
            ends: [1_577_836_860_000_000, 1_577_836_920_000_000, 1_577_836_980_000_000], values: [0, 12, 12],
            sourceIndices: [0, 0, 0]),
        "uuid-metadata": SampleBatch(
            batchID: 1, subject: "bo", typeIdentifier: "heartRate", unit: "count/min",
            sources: [SourceInfo(name: "Ring")], starts: [-60_000_000], ends: [-60_000_000], values: [72.5],
            sourceIndices: [0], uuids: [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!],
            metadata: [["k1": .quantity(1.5, unit: "km"), "k2": .date(-1)]]),
        "rounded-values": SampleBatch(
            batchID: 2, subject: "bo", typeIdentifier: "distanceWalkingRunning", unit: "m",
            sources: [SourceInfo(name: "Ring")], starts: [0], ends: [60_000_000], values: [1234.56],
            sourceIndices: [0], uuids: [UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!], valueDigits: 6),
        "category-sleep": SampleBatch(
            batchID: 2, subject: "anna", typeIdentifier: "sleepAnalysis", unit: "",
            sources: [SourceInfo(name: "Watch")],
            starts: [1_577_919_600_000_000, 1_577_921_400_000_000],
            ends: [1_577_921_400_000_000, 1_577_926_800_000_000],
            values: [0, 3], sourceIndices: [0, 0]),
    ]

    /// The spec file, found from this source file's path.
    static func spec() throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Protocol/SAMPLE-BATCH.md")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// The bytes of the example named `name`: the code block after `<!-- example: name -->`, each line's hex
    /// pairs before its `#` comment.
    static func specBytes(_ name: String, in spec: String) -> [UInt8]? {
        guard let marker = spec.range(of: "<!-- example: \(name) -->"),
            let open = spec.range(of: "```\n", range: marker.upperBound..<spec.endIndex),
            let close = spec.range(of: "```", range: open.upperBound..<spec.endIndex)
        else { return nil }
        var bytes: [UInt8] = []
        for line in spec[open.upperBound..<close.lowerBound].split(separator: "\n") {
            let hex = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            for token in hex.split(separator: " ") {
                guard let byte = UInt8(token, radix: 16) else { return nil }
                bytes.append(byte)
            }
        }
        return bytes
    }

    @Test("each example in the spec is what the encoder writes, and decodes back", arguments: examples.keys.sorted())
    func example(name: String) throws {
        let batch = Self.examples[name]!
        let encoded = try SampleBatchCodec.encode(batch)
        let documented = Self.specBytes(name, in: try Self.spec())
        #expect(
            documented == encoded,
            "encoder writes: \(encoded.map { String(format: "%02X", $0) }.joined(separator: " "))")
        #expect(try SampleBatchCodec.decode(encoded) == batch)
    }
}
