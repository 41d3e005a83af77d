import HealthCodec
import HealthEngine
import HealthModel
import HealthStorage
import Testing
import TestSupport

/// Inputs the fuzz harnesses of Fuzz/ found crashing (Fuzz/README.md), each of which must now fail cleanly.
struct StorageFuzzRegressionTests {
    /// The `snapshot` harness's input: byte 0 odd asks for the CRC, the rest is the file without it.
    static func snapshotFile(_ input: [UInt8]) -> [UInt8] {
        var file = Array(input.dropFirst())
        withUnsafeBytes(of: Zlib.crc32(file).littleEndian) { file.append(contentsOf: $0) }
        return file
    }

    @Test("a version 4 snapshot row whose duration would overflow Int64 is refused as damage, not a trap")
    func snapshotDurationOverflow() throws {
        let input = fuzzBytes(
            hex: """
                01484b534e415030340973746570436f756e74090000000000000007000000000000000204616e6e61041c0205576174
                636810631b020000000000002e6865616c7468000000066950686f6e6500000000000000000001010000000000000001
                0004000000000000000000808ece1c02056b640000261e24400a060000c7000000000000000700000000000000020461
                6e0000000000000000ffffffffffffffffffffffffffffff534e41503034000000002a40000000000000374000000000
                008040400000010000000100010000000000000000002a40000000000000374000000102000000000000000300000000
                00010200000000000000030500030000
                """)
        // Refused by the instant range (years 0001–9999) before its duration is ever computed.
        #expect { try SnapshotCodec.decode(Self.snapshotFile(input)) } throws: { error in
            (error as? CodecError)?.message.contains("lies outside years 0001–9999") == true
        }
    }

    @Test("a segment starting at the last sequence number is damage, not an overflow trap (log-segment harness)")
    func segmentAtTheLastSequence() {
        // The shape the harness found: a header naming sequence 2^64 - 1 and a valid record carrying it.
        var bytes = LogFraming.segmentHeader(firstSequence: .max)
        bytes += LogFraming.record(kind: 2, sequence: .max, payload: Array("wei`ht".utf8))
        bytes += LogFraming.record(kind: 2, sequence: 0, payload: [1])
        let scan = LogFraming.scan(bytes)
        #expect(scan.records.isEmpty)
        guard case .corrupt(offset: 0, let reason)? = scan.damage else {
            Issue.record("\(String(describing: scan.damage))")
            return
        }
        #expect(reason.contains("beyond any log"))
        // Resynchronising past damage saturates instead of overflowing.
        #expect(LogFraming.salvage(bytes, from: LogFraming.headerSize, expected: 1).count == 2)
    }

    @Test("a manifest naming a sequence beyond any log is refused")
    func manifestBeyondAnyLog() {
        let manifest = SnapshotManifest(
            generation: 3,
            entries: [.init(type: "stepCount", file: "stepCount-3.snap", sequence: .max, size: 1, crc: 0)])
        #expect(throws: CodecError.self) { try SnapshotManifest.decode(manifest.encode()) }
    }

    @Test("a version 4 snapshot with a row outside years 0001–9999 is damage: no image that today's format refuses")
    func oldSnapshotRowOutsideTheYears() throws {
        let input = fuzzBytes(
            hex: """
                01484b534e415030340973746570436f756e74090000000000000007000000000000000204616e6e6104808ece1c0205
                576174636810636f6d2e6170706c652e6865616c7468000000066950686f010000000100010000000000000002000000
                000000000300000000008debbe5e5532fbeea26f76756c6174696f6e74657374726573756c80021590ff010000000100
                01000000000000000200000000000000030000000000000004000000000000000000000000000000002a640000016b40
                37ffffffffffffffffffffffffffff044000000000050000000000000006000000000000000700000000000000
                """)
        // It decoded before, and the image it gave re-encoded to a file that did not decode.
        #expect { try SnapshotCodec.decode(Self.snapshotFile(input)) } throws: { error in
            (error as? CodecError)?.message.contains("series \"anna\", block of rows from 0: row 0 lies outside")
                == true
        }
    }

    @Test("a route snapshot found by the route-snapshot harness: decoded, it re-encodes to a file that decodes")
    func routeSnapshotRoundTrip() throws {
        let input = fuzzBytes(
            hex: """
                01484b52544530303109fc0000000000000300020201199a420202020202020000100000030009fc0000000000000300
                0054450202020000100000030009fc000000020202020202020202023109000002020202020202020202020202020202
                0209000000000000000200000000
                """)
        let decoded = try ObjectSnapshotCodec<WorkoutRoute>.decode(Self.snapshotFile(input))
        let encoded = ObjectSnapshotCodec<WorkoutRoute>.encode(decoded.image, sequence: decoded.sequence)
        let again = try ObjectSnapshotCodec<WorkoutRoute>.decode(encoded)
        #expect(ObjectSnapshotCodec<WorkoutRoute>.encode(again.image, sequence: again.sequence) == encoded)
    }
}
