import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthCodec

@Suite("SampleBatch round trips")
struct SampleBatchRoundTripTests {
    static let encodings: [ValueEncoding?] = [nil, .raw, .xor]

    @Test(
        "random batches round-trip with every value encoding, with and without UUIDs and metadata",
        arguments: [false, true], [false, true])
    func randomRoundTrips(uuids: Bool, metadata: Bool) throws {
        for (seed, kind) in ValueKind.allCases.enumerated() {
            let batch = RandomBatches.make(
                seed: UInt64(seed) + (uuids ? 10 : 0) + (metadata ? 100 : 0), rows: 3_000, sources: 40, uuids: uuids,
                metadata: metadata, values: kind)
            for encoding in Self.encodings + (kind == .integers ? [.integerDelta] : []) {
                let bytes = try SampleBatchCodec.encode(batch, valueEncoding: encoding)
                let decoded = try SampleBatchCodec.decode(bytes)
                #expect(RandomBatches.differences(batch, decoded) == [], "\(kind) \(String(describing: encoding))")
                #expect(bytes[0] == SampleBatchCodec.layoutVersion)
            }
        }
    }

    @Test("any Int64 start and end round-trips, including Int64.min, Int64.max and inverted intervals")
    func wildTimestamps() throws {
        var batch = RandomBatches.make(
            seed: 42, rows: 2_000, sources: 3, uuids: false, metadata: false, values: .fractional, wildTimes: true)
        batch.starts[0] = .min
        batch.ends[0] = .max
        batch.starts[1] = .max
        batch.ends[1] = .min
        batch.starts[2] = -1
        let decoded = try SampleBatchCodec.decode(try SampleBatchCodec.encode(batch))
        #expect(RandomBatches.differences(batch, decoded) == [])
    }

    @Test("NaN payloads, signs of zero and infinities keep their exact bits", arguments: [ValueEncoding.raw, .xor])
    func specialValues(encoding: ValueEncoding) throws {
        let batch = RandomBatches.make(
            seed: 9, rows: 500, sources: 1, uuids: false, metadata: false, values: .specials)
        let decoded = try SampleBatchCodec.decode(try SampleBatchCodec.encode(batch, valueEncoding: encoding))
        #expect(decoded.values.map(\.bitPattern) == batch.values.map(\.bitPattern))
        #expect(decoded.values.contains { $0.isSignalingNaN })
    }

    @Test("an empty batch round-trips, with or without sources", arguments: [0, 2])
    func emptyBatch(sources: Int) throws {
        let batch = RandomBatches.make(
            seed: 1, rows: 0, sources: sources, uuids: false, metadata: false, values: .integers)
        let bytes = try SampleBatchCodec.encode(batch)
        let decoded = try SampleBatchCodec.decode(bytes)
        #expect(decoded == batch)
        #expect(decoded.count == 0)
    }

    @Test("without a UUID column, rows keep the UUIDs derived from the batch id")
    func derivedUUIDs() throws {
        let batch = RandomBatches.make(seed: 5, rows: 20, sources: 2, uuids: false, metadata: false, values: .integers)
        let decoded = try SampleBatchCodec.decode(try SampleBatchCodec.encode(batch))
        #expect(decoded.uuids == nil)
        #expect(decoded.uuid(row: 7) == SampleBatch.derivedUUID(batchID: batch.batchID, row: 7))
    }

    @Test("the digits values were rounded to round-trip after the value encoding byte, and only with flag bit 2")
    func valueDigits() throws {
        var batch = RandomBatches.make(seed: 8, rows: 5, sources: 1, uuids: true, metadata: false, values: .integers)
        let plain = try SampleBatchCodec.encode(batch)
        batch.valueDigits = 6
        let rounded = try SampleBatchCodec.encode(batch)
        #expect(try SampleBatchCodec.decode(rounded) == batch)
        #expect(try SampleBatchCodec.decode(plain).valueDigits == nil)
        #expect(rounded.count == plain.count + 1)
        let header =
            1 + 8 + 1 + batch.subject.utf8.count + 1 + batch.typeIdentifier.utf8.count + 1 + batch.unit.utf8.count
        #expect(rounded[header] == plain[header] | 0x04, "flags")
        #expect(rounded[header + 2] == 6, "the digits follow the value encoding")
        for bad in [0, 18] {
            var corrupt = rounded
            corrupt[header + 2] = UInt8(bad)
            #expect(throws: CodecError.self) { try SampleBatchCodec.decode(corrupt) }
            batch.valueDigits = bad
            #expect(throws: CodecError.self) { try SampleBatchCodec.encode(batch) }
        }
    }

    @Test("the row count read from the header alone is the batch's, and a truncated header throws")
    func rowCountFromHeader() throws {
        for seed in 0..<20 {
            var batch = RandomBatches.make(
                seed: UInt64(seed), rows: seed * 7, sources: 1 + seed % 3, uuids: seed % 2 == 0,
                metadata: seed % 3 == 0,
                values: .integers)
            if seed % 4 == 0 { batch.valueDigits = 6 }
            let bytes = try SampleBatchCodec.encode(batch)
            var reader = ByteReader(bytes)
            #expect(try SampleBatchCodec.rowCount(from: &reader) == batch.count)
            var short = ByteReader(Array(bytes.prefix(12)))
            #expect(throws: CodecError.self) { try SampleBatchCodec.rowCount(from: &short) }
        }
    }

    @Test("metadata present but empty on every row stays present")
    func emptyMetadataRows() throws {
        var batch = RandomBatches.make(seed: 6, rows: 10, sources: 1, uuids: false, metadata: false, values: .integers)
        batch.metadata = Array(repeating: [:], count: 10)
        let decoded = try SampleBatchCodec.decode(try SampleBatchCodec.encode(batch))
        #expect(decoded.metadata?.count == 10)
        #expect(decoded == batch)
    }

    @Test("the encoding picked: integer deltas for integers, XOR for repeats, raw for noise")
    func bestEncoding() {
        #expect(ValueEncoding.best(for: [0, 12, 129, -4, 9_007_199_254_740_992]) == .integerDelta)
        #expect(ValueEncoding.best(for: [1, -0.0]) != .integerDelta)
        #expect(ValueEncoding.best(for: [1, .nan]) != .integerDelta)
        #expect(ValueEncoding.best(for: [9_007_199_254_740_994]) != .integerDelta)
        #expect(ValueEncoding.best(for: Array(repeating: 98.6, count: 100)) == .xor)
        var random = SplitMix64(seed: 3)
        #expect(ValueEncoding.best(for: (0..<100).map { _ in Double.random(in: 0..<1, using: &random) }) == .raw)
        #expect(ValueEncoding.best(for: []) == .integerDelta)
    }

    @Test("integer deltas take one byte per small step")
    func integerDeltaSize() throws {
        let batch = SampleBatch(
            batchID: 1, subject: "s", typeIdentifier: "heartRate", unit: "count/min", sources: [SourceInfo(name: "w")],
            starts: Array(0..<1000), ends: Array(0..<1000), values: (0..<1000).map { Double(60 + $0 % 3) },
            sourceIndices: Array(repeating: 0, count: 1000))
        let bytes = try SampleBatchCodec.encode(batch)
        // 41 header bytes (version 1, id 8, three strings 22, flags 1, encoding 1, one source 6, row count 2),
        // one byte per row for each of start, duration and value, and one 3-byte source run.
        #expect(bytes.count == 41 + 3 * 1000 + 3)
    }

    @Test("forcing integer deltas on fractional values throws invalidArgument")
    func integerDeltaRejectsFractions() {
        let batch = SampleBatch(
            batchID: 1, subject: "s", typeIdentifier: "t", unit: "u", sources: [SourceInfo(name: "w")], starts: [0],
            ends: [0], values: [0.5], sourceIndices: [0])
        let error = #expect(throws: CodecError.self) {
            try SampleBatchCodec.encode(batch, valueEncoding: .integerDelta)
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test("encode refuses columns of different lengths and source indices outside the dictionary")
    func encodeChecksShape() {
        var ragged = RandomBatches.make(seed: 2, rows: 5, sources: 1, uuids: false, metadata: false, values: .integers)
        ragged.ends.removeLast()
        #expect(throws: CodecError.self) { try SampleBatchCodec.encode(ragged) }
        var badIndex = RandomBatches.make(
            seed: 2, rows: 5, sources: 1, uuids: false, metadata: false, values: .integers)
        badIndex.sourceIndices[3] = 1
        let error = #expect(throws: CodecError.self) { try SampleBatchCodec.encode(badIndex) }
        #expect(error?.code == .malformedPayload)
    }

    @Test("decode(from:) reads one batch inside a larger message and stops after it")
    func embedded() throws {
        let batch = RandomBatches.make(seed: 8, rows: 50, sources: 2, uuids: true, metadata: true, values: .fractional)
        var writer = ByteWriter()
        writer.write(0xAB)
        try SampleBatchCodec.encode(batch, into: &writer)
        writer.writeLE(UInt32(0xDEAD_BEEF))
        var reader = ByteReader(writer.bytes, offset: 1)
        let decoded = try SampleBatchCodec.decode(from: &reader)
        #expect(RandomBatches.differences(batch, decoded) == [])
        #expect(try reader.readLE(UInt32.self) == 0xDEAD_BEEF)
        #expect(reader.isAtEnd)
    }

    @Test("metadata keys are written in sorted order, so equal batches encode to equal bytes")
    func deterministic() throws {
        let batch = RandomBatches.make(seed: 11, rows: 200, sources: 3, uuids: true, metadata: true, values: .integers)
        let copy = try SampleBatchCodec.decode(try SampleBatchCodec.encode(batch))
        #expect(try SampleBatchCodec.encode(copy) == SampleBatchCodec.encode(batch))
    }
}
