import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthCodec

@Suite("Zlib")
struct ZlibTests {
    /// Text-like bytes that compress, with some noise so the stream has several blocks.
    static func compressible(_ count: Int, seed: UInt64 = 7) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        let words = Array("steps heart rate bpm count/min kcal ".utf8)
        return (0..<count).map { i in
            i % 97 == 0 ? UInt8.random(in: 0...255, using: &random) : words[(i / 3) % words.count]
        }
    }

    @Test("deflate then inflate gives the input back", arguments: ZlibFormat.allCases, [0, 1, 6, 9])
    func roundTrip(format: ZlibFormat, level: Int) throws {
        let input = Self.compressible(200_000)
        let compressed = Zlib.deflate(input, level: level, format: format)
        if level > 0 { #expect(compressed.count < input.count / 3) }
        #expect(try Zlib.inflate(compressed, maxOutput: input.count, format: format) == input)
    }

    @Test("a stream fed in pieces inflates to the pieces joined, twice on one deflater", arguments: ZlibFormat.allCases)
    func pieces(format: ZlibFormat) throws {
        let deflater = Deflater(level: 1, format: format)
        for seed in [UInt64(3), 4] {
            let input = Self.compressible(150_000, seed: seed)
            var compressed: [UInt8] = []
            for (index, start) in stride(from: 0, to: input.count, by: 10_000).enumerated() {
                let piece = input[start..<min(start + 10_000, input.count)]
                compressed += piece.withUnsafeBytes { deflater.compress($0, flush: index % 5 == 4) }
            }
            compressed += deflater.finish()
            #expect(try Zlib.inflate(compressed, maxOutput: input.count, format: format) == input)
        }
    }

    @Test("empty input round-trips in every format", arguments: ZlibFormat.allCases)
    func empty(format: ZlibFormat) throws {
        let compressed = Zlib.deflate([UInt8](), format: format)
        #expect(!compressed.isEmpty)
        #expect(try Zlib.inflate(compressed, maxOutput: 0, format: format) == [])
    }

    @Test("the zlib header says deflate with a 32 KB window")
    func zlibHeader() {
        let compressed = Zlib.deflate(Array("x".utf8))
        #expect(compressed[0] == 0x78)
        #expect((UInt16(compressed[0]) << 8 | UInt16(compressed[1])) % 31 == 0)
    }

    @Test("a reused Deflater gives the same bytes as a fresh one")
    func deflaterReuse() {
        let deflater = Deflater(level: 1)
        let a = Self.compressible(50_000, seed: 1)
        let b = Self.compressible(70_000, seed: 2)
        _ = deflater.deflate(a)
        #expect(deflater.deflate(b) == Zlib.deflate(b, level: 1))
    }

    @Test("output of exactly the cap inflates; one byte less of cap throws inflatedTooLarge")
    func exactCap() throws {
        let input = Self.compressible(100_000)
        let compressed = Zlib.deflate(input)
        #expect(try Zlib.inflate(compressed, maxOutput: input.count) == input)
        let error = #expect(throws: CodecError.self) { try Zlib.inflate(compressed, maxOutput: input.count - 1) }
        #expect(error?.code == .inflatedTooLarge)
    }

    @Test("a zip bomb (100 MB of zeros) stops at the 1 MB cap without allocating more")
    func zipBomb() throws {
        let bomb = Zlib.deflate([UInt8](repeating: 0, count: 100 << 20), level: 9)
        #expect(bomb.count < 200_000)
        let cap = 1 << 20
        let error = #expect(throws: CodecError.self) { try Zlib.inflate(bomb, maxOutput: cap) }
        #expect(error?.code == .inflatedTooLarge)
        #expect(error?.message.contains("\(cap)") == true)

        // Streaming: the output never holds or reserves more than the cap.
        let inflater = Inflater(maxOutput: cap)
        var output: [UInt8] = []
        #expect(throws: CodecError.self) {
            for chunk in stride(from: 0, to: bomb.count, by: 1024) {
                try inflater.inflate(bomb[chunk..<min(chunk + 1024, bomb.count)], into: &output)
            }
        }
        #expect(output.count == cap)
        #expect(output.capacity < cap + 64 * 1024)
        // The failure sticks until reset.
        #expect(throws: CodecError.self) { try inflater.inflate(bomb[0..<10], into: &output) }
    }

    @Test("corrupt data throws malformedPayload with zlib's message")
    func corrupt() throws {
        let compressed = Zlib.deflate(Self.compressible(10_000))
        var badHeader = compressed
        badHeader[0] = 0x79
        let headerError = #expect(throws: CodecError.self) { try Zlib.inflate(badHeader, maxOutput: 1 << 20) }
        #expect(headerError?.code == .malformedPayload)
        #expect(headerError?.message.hasPrefix("zlib: ") == true)
        #expect(headerError?.message.contains("header") == true)

        var badChecksum = compressed
        badChecksum[badChecksum.count - 1] ^= 0xFF
        let checksumError = #expect(throws: CodecError.self) { try Zlib.inflate(badChecksum, maxOutput: 1 << 20) }
        #expect(checksumError?.message.contains("check") == true)

        let garbage: [UInt8] = [0x78, 0x9C, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(throws: CodecError.self) { try Zlib.inflate(garbage, maxOutput: 1 << 20) }
    }

    @Test("a truncated stream or bytes after its end throw")
    func truncatedAndTrailing() throws {
        let compressed = Zlib.deflate(Self.compressible(10_000))
        for cut in [0, 1, 2, compressed.count / 2, compressed.count - 1] {
            let error = #expect(throws: CodecError.self) {
                try Zlib.inflate(compressed[0..<cut], maxOutput: 1 << 20)
            }
            #expect(error?.code == .malformedPayload)
        }
        let trailing = #expect(throws: CodecError.self) {
            try Zlib.inflate(compressed + [0], maxOutput: 1 << 20)
        }
        #expect(trailing?.message.contains("after the end") == true)
    }

    @Test("streaming inflate fed in chunks of any size", arguments: ZlibFormat.allCases, [1, 7, 4096])
    func streaming(format: ZlibFormat, chunkSize: Int) throws {
        let input = Self.compressible(60_000, seed: 3)
        let compressed = Zlib.deflate(input, format: format)
        let inflater = Inflater(format: format, maxOutput: input.count)
        var output: [UInt8] = []
        var position = 0
        while position < compressed.count {
            let end = min(position + chunkSize, compressed.count)
            let used = try inflater.inflate(compressed[position..<end], into: &output)
            #expect(used == end - position)
            position = end
        }
        try inflater.finish()
        #expect(inflater.isFinished)
        #expect(inflater.totalOut == input.count)
        #expect(output == input)
    }

    @Test("finish throws while a stream is incomplete; reset starts a new stream")
    func finishAndReset() throws {
        let first = Zlib.deflate(Array("first".utf8))
        let inflater = Inflater(maxOutput: 100)
        var output: [UInt8] = []
        try inflater.inflate(first[0..<3], into: &output)
        #expect(throws: CodecError.self) { try inflater.finish() }
        inflater.reset()
        output = []
        try inflater.inflate(Zlib.deflate(Array("second".utf8)), into: &output)
        try inflater.finish()
        #expect(output == Array("second".utf8))
    }

    @Test("a raw deflate stream followed by other bytes reports where it ended (as in a zip entry)")
    func rawStreamBoundary() throws {
        // Python's zlib.compressobj(6, DEFLATED, -15) of "raw deflate for zip entries".
        let raw: [UInt8] = [
            43, 74, 44, 87, 72, 73, 77, 203, 73, 44, 73, 85, 72, 203, 47, 82, 168, 202, 44, 80, 72, 205, 43, 41, 202,
            76, 45, 6, 0,
        ]
        let descriptor: [UInt8] = [0x50, 0x4B, 0x07, 0x08]
        let inflater = Inflater(format: .raw, maxOutput: 1000)
        var output: [UInt8] = []
        let used = try inflater.inflate(raw + descriptor, into: &output)
        #expect(used == raw.count)
        #expect(inflater.isFinished)
        #expect(String(decoding: output, as: UTF8.self) == "raw deflate for zip entries")
        #expect(try inflater.inflate(descriptor, into: &output) == 0)
    }

    @Test("reads gzip written by the gzip tool and rejects a bad CRC")
    func gzipFromTool() throws {
        // printf 'hello, hkd\n' | gzip -n -9
        let gzip: [UInt8] = [
            0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xd7, 0x51, 0xc8,
            0xc8, 0x4e, 0xe1, 0x02, 0x00, 0x34, 0xa4, 0x48, 0x1c, 0x0b, 0x00, 0x00, 0x00,
        ]
        #expect(try Zlib.inflate(gzip, maxOutput: 100, format: .gzip) == Array("hello, hkd\n".utf8))
        #expect(Zlib.crc32(Array("hello, hkd\n".utf8)) == 0x1C48_A434)
        var bad = gzip
        bad[23] ^= 1
        let error = #expect(throws: CodecError.self) { try Zlib.inflate(bad, maxOutput: 100, format: .gzip) }
        #expect(error?.message.contains("check") == true)
        // The same bytes are not a zlib stream.
        #expect(throws: CodecError.self) { try Zlib.inflate(gzip, maxOutput: 100, format: .zlib) }
    }

    @Test("crc32 of \"123456789\" is 0xCBF43926, and pieces chain")
    func crc32() {
        let check = Array("123456789".utf8)
        #expect(Zlib.crc32(check) == 0xCBF4_3926)
        #expect(Zlib.crc32(check[4...], initial: Zlib.crc32(check[..<4])) == 0xCBF4_3926)
        #expect(Zlib.crc32([UInt8]()) == 0)
    }
}
