import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthCodec

/// Writes payload headers by hand, to build inputs the encoder would never produce.
struct HandWrittenPayload {
    var writer = ByteWriter()

    init(
        version: UInt8 = 1, subject: [UInt8] = Array("s".utf8), flags: UInt8 = 0, encoding: UInt8 = 2,
        sources: Int = 1
    ) {
        writer.write(version)
        writer.writeLE(UInt64(7))
        writer.writeBlob(subject)
        writer.writeString("stepCount")
        writer.writeString("count")
        writer.write(flags)
        writer.write(encoding)
        writer.writeVarint(UInt64(sources))
        for i in 0..<sources {
            writer.writeString("source \(i)")
            for _ in 0..<3 { writer.writeString("") }
        }
    }

    /// Appends a row count and `rows` one-byte starts, durations and values, then the given source runs.
    mutating func rows(_ rows: Int, runs: [(UInt64, UInt64)]) {
        writer.writeVarint(UInt64(rows))
        writer.write(bytes: repeatElement(0, count: 3 * rows))
        for (index, length) in runs {
            writer.writeVarint(index)
            writer.writeVarint(length)
        }
    }

    var bytes: [UInt8] { writer.bytes }
}

@Suite("SampleBatch malformed input")
struct SampleBatchMalformedTests {
    static func decodeError(_ bytes: [UInt8], limits: BatchLimits = .default) -> CodecError? {
        #expect(throws: CodecError.self) { try SampleBatchCodec.decode(bytes, limits: limits) }
    }

    @Test("the hand-written payload helper makes a valid batch")
    func handWrittenIsValid() throws {
        var payload = HandWrittenPayload(sources: 2)
        payload.rows(3, runs: [(1, 2), (0, 1)])
        let batch = try SampleBatchCodec.decode(payload.bytes)
        #expect(batch.sourceIndices == [1, 1, 0])
        #expect(batch.starts == [0, 0, 0])
        #expect(batch.sources.map(\.name) == ["source 0", "source 1"])
    }

    @Test("every truncation of a small valid batch throws, and so does one extra byte")
    func everyTruncation() throws {
        let batch = RandomBatches.make(seed: 3, rows: 6, sources: 3, uuids: true, metadata: true, values: .fractional)
        for encoding in ValueEncoding.allCases where encoding != .integerDelta {
            let bytes = try SampleBatchCodec.encode(batch, valueEncoding: encoding)
            for cut in 0..<bytes.count {
                let error = Self.decodeError(Array(bytes[0..<cut]))
                #expect(error?.code == .malformedPayload, "cut at \(cut)")
            }
            let trailing = Self.decodeError(bytes + [0])
            #expect(trailing?.message.contains("unexpected bytes") == true)
            // The same truncations through a reader whose end stops short of the array's.
            for cut in stride(from: 0, to: bytes.count, by: 5) {
                var reader = ByteReader(bytes, endIndex: cut)
                #expect(throws: CodecError.self) { try SampleBatchCodec.decode(from: &reader) }
            }
        }
    }

    @Test("random byte corruption never crashes: it decodes or throws CodecError")
    func randomCorruption() throws {
        var random = SplitMix64(seed: 77)
        let batch = RandomBatches.make(seed: 4, rows: 40, sources: 4, uuids: true, metadata: true, values: .integers)
        let bytes = try SampleBatchCodec.encode(batch)
        var failures = 0
        for _ in 0..<3_000 {
            var mutated = bytes
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                mutated[Int.random(in: 0..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            do {
                _ = try SampleBatchCodec.decode(mutated)
            } catch is CodecError {
                failures += 1
            }
        }
        #expect(failures > 1_000)
    }

    @Test("a truncated varint in the row count throws")
    func truncatedVarint() {
        var payload = HandWrittenPayload()
        payload.writer.write(0x80)
        let error = Self.decodeError(payload.bytes)
        #expect(error?.message.contains("truncated varint") == true)
    }

    @Test("a varint longer than 64 bits throws")
    func overlongVarint() {
        var payload = HandWrittenPayload()
        payload.writer.write(bytes: [UInt8](repeating: 0xFF, count: 10) + [0x01])
        let error = Self.decodeError(payload.bytes)
        #expect(error?.message.contains("overflows 64 bits") == true)
    }

    @Test("a row count larger than the payload can hold fails at once, naming the count")
    func rowCountOverPayload() {
        // A header, a claim of 1,000,000 rows, and only the 32 column bytes that 10 rows would take.
        var payload = HandWrittenPayload()
        payload.writer.writeVarint(1_000_000)
        payload.writer.write(bytes: repeatElement(0, count: 32))
        let bytes = payload.bytes
        let error = Self.decodeError(bytes)
        #expect(error?.code == .malformedPayload)
        #expect(error?.message.contains("row count 1000000") == true)
        #expect(error?.message.contains("remain") == true)
    }

    @Test("a row count over the limit is batchTooLarge")
    func rowCountOverLimit() {
        var payload = HandWrittenPayload()
        payload.rows(100, runs: [(0, 100)])
        let error = Self.decodeError(payload.bytes, limits: BatchLimits(maxRows: 99))
        #expect(error?.code == .batchTooLarge)
        #expect(error?.message.contains("limit of 99") == true)
        #expect(throws: Never.self) { try SampleBatchCodec.decode(payload.bytes, limits: BatchLimits(maxRows: 100)) }
    }

    @Test("a source index outside the dictionary throws")
    func sourceIndexOutOfRange() {
        var payload = HandWrittenPayload(sources: 2)
        payload.rows(4, runs: [(0, 2), (2, 2)])
        let error = Self.decodeError(payload.bytes)
        #expect(error?.message.contains("source index 2") == true)
        #expect(error?.message.hasPrefix("source column: ") == true)
    }

    @Test("rows without any source throw")
    func rowsWithoutSources() {
        var payload = HandWrittenPayload(sources: 0)
        payload.rows(1, runs: [(0, 1)])
        #expect(Self.decodeError(payload.bytes)?.message.contains("outside the dictionary of 0") == true)
    }

    @Test("source runs that are empty or overrun the rows throw", arguments: [[(0, 0), (0, 3)], [(0, 2), (0, 2)]])
    func badRuns(runs: [(UInt64, UInt64)]) {
        var payload = HandWrittenPayload()
        payload.rows(3, runs: runs)
        #expect(Self.decodeError(payload.bytes)?.message.contains("source run") == true)
    }

    @Test("invalid UTF-8 in a string throws")
    func invalidUTF8() {
        var payload = HandWrittenPayload(subject: [0x61, 0xC3, 0x28])
        payload.rows(0, runs: [])
        let error = Self.decodeError(payload.bytes)
        #expect(error?.message.contains("subject at byte 9 is not valid UTF-8") == true)
    }

    @Test("a string over the limit is batchTooLarge; one past the payload is malformed")
    func overLimitStrings() {
        var payload = HandWrittenPayload(subject: Array(repeating: 0x61, count: 300))
        payload.rows(0, runs: [])
        let error = Self.decodeError(payload.bytes, limits: BatchLimits(maxStringBytes: 256))
        #expect(error?.code == .batchTooLarge)
        #expect(error?.message.contains("subject length 300") == true)

        var past = ByteWriter()
        past.write(1)
        past.writeLE(UInt64(7))
        past.writeVarint(200)
        past.write(bytes: Array("short".utf8))
        #expect(Self.decodeError(past.bytes)?.code == .malformedPayload)
    }

    @Test("unknown layout version, flags or value encoding throw")
    func unknownHeaderBytes() {
        for (payload, text) in [
            (HandWrittenPayload(version: 2), "layout version 2"), (HandWrittenPayload(flags: 8), "flag bits 8"),
            (HandWrittenPayload(encoding: 3), "value encoding 3"),
        ] {
            var payload = payload
            payload.rows(0, runs: [])
            #expect(Self.decodeError(payload.bytes)?.message.contains(text) == true, "\(text)")
        }
    }

    @Test("too many sources for the limit or for the payload throw")
    func tooManySources() {
        var payload = HandWrittenPayload(sources: 3)
        payload.rows(0, runs: [])
        #expect(Self.decodeError(payload.bytes, limits: BatchLimits(maxSources: 2))?.code == .batchTooLarge)
        var claimed = ByteWriter()
        claimed.write(bytes: HandWrittenPayload(sources: 0).bytes.dropLast())
        claimed.writeVarint(1_000_000_000)
        #expect(Self.decodeError(claimed.bytes)?.message.contains("source count 1000000000") == true)
    }

    @Test("integer deltas that leave ±2^53 throw")
    func integerOutOfRange() {
        var payload = HandWrittenPayload()
        payload.writer.writeVarint(1)
        payload.writer.write(bytes: [0, 0])
        payload.writer.writeSignedVarint(1 << 54)
        payload.writer.write(bytes: [0, 1])
        #expect(Self.decodeError(payload.bytes)?.message.contains("beyond ±2^53") == true)
    }

    /// A one-row batch with metadata whose row is `entries` written by `write`.
    static func metadataPayload(entries: Int, _ write: (inout ByteWriter) -> Void) -> [UInt8] {
        var payload = HandWrittenPayload(flags: 2)
        payload.rows(1, runs: [(0, 1)])
        payload.writer.writeVarint(UInt64(entries))
        write(&payload.writer)
        return payload.bytes
    }

    @Test("bad metadata throws: unknown tag, duplicate key, too many entries, invalid UTF-8")
    func badMetadata() throws {
        let good = Self.metadataPayload(entries: 1) { w in
            w.writeString("k")
            w.write(1)
            w.writeDouble(2.5)
        }
        #expect(try SampleBatchCodec.decode(good).metadata == [["k": .number(2.5)]])

        let unknownTag = Self.metadataPayload(entries: 1) { w in
            w.writeString("k")
            w.write(9)
            w.write(0)
        }
        #expect(Self.decodeError(unknownTag)?.message.contains("unknown metadata tag 9") == true)

        let duplicate = Self.metadataPayload(entries: 2) { w in
            for _ in 0..<2 {
                w.writeString("k")
                w.write(2)
                w.writeSignedVarint(-5)
            }
        }
        let duplicateError = Self.decodeError(duplicate)
        #expect(duplicateError?.message.contains("duplicate metadata key \"k\"") == true)
        #expect(duplicateError?.message.hasPrefix("metadata of row 0: ") == true)

        let many = Self.metadataPayload(entries: 3) { w in
            for key in ["a", "b", "c"] {
                w.writeString(key)
                w.write(0)
                w.writeString("")
            }
        }
        #expect(try SampleBatchCodec.decode(many).metadata?[0].count == 3)
        let limited = BatchLimits(maxMetadataEntriesPerRow: 2)
        #expect(Self.decodeError(many, limits: limited)?.code == .batchTooLarge)

        let badKey = Self.metadataPayload(entries: 1) { w in
            w.writeBlob([0xFF, 0xFE])
            w.write(0)
            w.writeString("")
        }
        #expect(Self.decodeError(badKey)?.message.contains("not valid UTF-8") == true)
    }
}

@Suite("ByteReader")
struct ByteReaderTests {
    @Test("a CodecError and its code describe themselves (ErrorCode.name once recursed forever)")
    func errorDescriptions() {
        let error = CodecError(.inflatedTooLarge, "too big")
        #expect(ErrorCode.inflatedTooLarge.description == "inflatedTooLarge (103)")
        #expect(String(describing: error) == "too big")
        #expect(error.healthError == HealthError(.inflatedTooLarge, "too big"))
        #expect(ErrorCode.allCases.allSatisfy { !$0.name.isEmpty && !$0.name.contains(" ") })
    }

    @Test("varints of every length round-trip, and lengths match what is written")
    func varints() throws {
        var writer = ByteWriter()
        let values: [UInt64] = [0, 1, 127, 128, 300, 16_383, 16_384, 1 << 35, UInt64.max - 1, UInt64.max]
        for value in values { writer.writeVarint(value) }
        var reader = ByteReader(writer.bytes)
        for value in values { #expect(try reader.readVarint() == value) }
        #expect(reader.isAtEnd)
        for value in values {
            var one = ByteWriter()
            one.writeVarint(value)
            #expect(one.count == Varint.length(value))
        }
    }

    @Test("a range past the end of the array is clamped and reads as truncated")
    func clampedRange() throws {
        var reader = ByteReader([1, 2, 3], offset: 1, endIndex: 99)
        #expect(reader.remaining == 2)
        #expect(throws: CodecError.self) { try reader.readLE(UInt32.self) }
        #expect(try reader.readLE(UInt16.self) == 0x0302)
    }
}
