import Foundation
import HealthCodec
import HealthModel
import TestSupport
import Testing

@testable import HealthWire

@Suite("Frame decoder")
struct FrameDecoderTests {
    /// Every golden message as a frame, some large enough to be compressed.
    static var frames: [Frame] {
        var frames = Golden.valid.map { $0.message.frame(requestID: $0.requestID, flags: $0.flags) }
        var big = SampleBatch(batchID: 9, subject: "anna", typeIdentifier: "stepCount", unit: "count")
        for i in 0..<5_000 {
            big.append(
                start: Golden.t0 + Int64(i) * Micros.minute, end: Golden.t0 + Int64(i + 1) * Micros.minute,
                value: Double(i % 7 == 0 ? i % 130 : 0), source: i % 3 == 0 ? Golden.phone : Golden.watch)
        }
        frames.append(Message.insert(Insert(batch: big)).frame(requestID: 99))
        return frames
    }

    static func stream(_ frames: [Frame]) -> [UInt8] {
        let encoder = FrameEncoder()
        var bytes: [UInt8] = []
        for frame in frames { encoder.encode(frame, into: &bytes) }
        return bytes
    }

    static func decode(_ bytes: [UInt8], chunk: Int) throws -> [Frame] {
        var decoder = FrameDecoder()
        var out: [Frame] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            decoder.append(bytes[offset..<end])
            offset = end
            while let frame = try decoder.next() { out.append(frame) }
        }
        #expect(decoder.bufferedByteCount == 0)
        return out
    }

    @Test(
        "the same frames whether fed one byte at a time, in odd chunks, or all at once",
        arguments: [1, 7, 4096, Int.max])
    func chunking(chunk: Int) throws {
        let frames = FrameDecoderTests.frames
        let decoded = try FrameDecoderTests.decode(FrameDecoderTests.stream(frames), chunk: chunk)
        #expect(decoded == frames)
    }

    @Test("large payloads are sent compressed and come back identical")
    func compression() throws {
        let frame = FrameDecoderTests.frames.last!
        let bytes = FrameEncoder().encode(frame)
        #expect(bytes[4] & FrameFlags.compressed.rawValue != 0)
        #expect(bytes.count < frame.payload.count / 2)
        let decoded = try FrameDecoderTests.decode(bytes, chunk: .max)
        #expect(decoded == [frame])
        #expect(try Message.decode(decoded[0]) == Message.decode(frame))
    }

    @Test("nothing is returned while a frame is incomplete")
    func incomplete() throws {
        let bytes = FrameEncoder().encode(Message.ping(Ping(nonce: 1)).frame(requestID: 1))
        var decoder = FrameDecoder()
        for byte in bytes.dropLast() {
            decoder.append([byte])
            #expect(try decoder.next() == nil)
        }
        decoder.append([bytes.last!])
        #expect(try decoder.next()?.kind == .ping)
        #expect(try decoder.next() == nil)
    }

    @Test("garbage fails at its first wrong byte, before a whole header arrives")
    func garbageFailsFast() {
        var decoder = FrameDecoder()
        decoder.append(Array("GET / HTTP/1.1\r\n".utf8).prefix(1))
        #expect(throws: WireError.self) { try decoder.next() }
    }

    @Test("a length over the limit fails as soon as the header is complete")
    func oversizedHeader() {
        var decoder = FrameDecoder(limits: FrameLimits(maxFrameBytes: 100, maxInflatedBytes: 100))
        decoder.append(Golden.frame(0x10, payload: [], length: 101))
        do {
            _ = try decoder.next()
            Issue.record("no error")
        } catch {
            #expect(error.code == .frameTooLarge)
        }
    }

    @Test("every truncation of every golden payload fails cleanly or decodes, never traps")
    func truncatedPayloads() {
        for entry in Golden.valid {
            let payload = entry.message.body.encodedPayload()
            for cut in 0..<payload.count {
                let frame = Frame(kind: entry.message.kind, requestID: 1, payload: Array(payload[..<cut]))
                // A cut that ends exactly before an optional trailing field is a valid shorter message: it must
                // then encode back to exactly the bytes left. Every other cut is an error.
                if let decoded = try? Message.decode(frame) {
                    #expect(decoded.body.encodedPayload() == frame.payload, "\(entry.name) cut at \(cut)")
                } else {
                    #expect(throws: HealthError.self, "\(entry.name) cut at \(cut)") { try Message.decode(frame) }
                }
            }
        }
    }

    @Test("random bytes after a valid header never trap")
    func randomPayloads() {
        var generator = SplitMix64(seed: TestSeed.value(106))
        for kind in MessageKind.allCases {
            for _ in 0..<200 {
                let count = Int.random(in: 0..<64, using: &generator)
                let payload = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
                _ = try? Message.decode(Frame(kind: kind, requestID: 0, payload: payload))
            }
        }
    }
}
