import Foundation
import HealthModel
import Testing

@testable import HKQKit

/// Every column and key the insert formats define is kept; an unknown one is refused unless told to skip it.
@Suite struct SampleFileKeysTests {
    static func read(_ text: String, name: String, ignoreUnknown: Bool = false) throws -> [Sample] {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString)-\(name)")
        try Data(text.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let reader = try SampleFileReader(path: url.path, format: nil, subject: "anna", ignoreUnknown: ignoreUnknown)
        var samples: [Sample] = []
        while let sample = try reader.next() { samples.append(sample) }
        return samples
    }

    static func message(_ body: () throws -> Void) -> String {
        do {
            try body()
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test func jsonLinesKeepBundleIdentifierAndMetadata() throws {
        let row = #"{"type":"stepCount","start":"2024-03-10T08:00:00Z","value":5,"source":"Watch""#
        let samples = try Self.read(
            """
            \(row),"bundleIdentifier":"com.apple.health.1","metadata":{"HKWasUserEntered":1,"note":"walk"}}
            \(row),"bundleIdentifier":"com.example.app"}
            """, name: "rows.jsonl")
        #expect(samples.map(\.source.bundleIdentifier) == ["com.apple.health.1", "com.example.app"])
        #expect(samples[0].metadata == ["HKWasUserEntered": .number(1), "note": .string("walk")])
        #expect(samples[0].uuid != samples[1].uuid, "a row differing only in its bundle id is another sample")
    }

    @Test func csvKeepsBundleIdentifier() throws {
        let samples = try Self.read(
            "type,start,end,value,unit,source,bundleIdentifier\n"
                + "stepCount,2024-03-10T08:00:00Z,,5,,Watch,com.apple.health.1\n", name: "rows.csv")
        #expect(samples.map(\.source.bundleIdentifier) == ["com.apple.health.1"])
    }

    @Test func unknownKeysAndColumnsAreRefusedByName() throws {
        let json = #"{"type":"stepCount","start":"2024-03-10T08:00:00Z","value":5,"source":"Watch","bundleId":"x"}"#
        #expect(Self.message { _ = try Self.read(json, name: "rows.jsonl") }.contains(#"unknown key "bundleId""#))
        #expect(try Self.read(json, name: "rows.jsonl", ignoreUnknown: true).count == 1)
        let csv = "type,start,end,value,unit,source,colour\nstepCount,2024-03-10T08:00:00Z,,5,,Watch,red\n"
        #expect(Self.message { _ = try Self.read(csv, name: "rows.csv") }.contains(#"unknown column "colour""#))
        #expect(try Self.read(csv, name: "rows.csv", ignoreUnknown: true).count == 1)
    }
}
