import TestSupport
import Testing

@testable import HealthEngine

/// ``BlockReader/varint()`` against a byte-by-byte restatement of LEB128, on every path it takes: the one-load
/// path (eight bytes left), the short path near a column's end, and varints longer than eight bytes.
@Suite("Block reader varints")
struct BlockReaderTests {
    /// LEB128 read one byte at a time: the value and the bytes it took, or nil when it runs off the end or past
    /// 64 bits (as the reader refuses it).
    static func plainVarint(_ bytes: [UInt8], at offset: Int) -> (value: UInt64, length: Int)? {
        var value: UInt64 = 0
        var index = offset
        var shift: UInt64 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if shift == 63, byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << shift
            index += 1
            if byte < 0x80 { return (value, index - offset) }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    /// Reads every varint of `bytes` in turn as the reader does, stopping at the first it refuses.
    static func readAll(_ bytes: [UInt8]) -> [UInt64?] {
        bytes.withUnsafeBytes { raw in
            var reader = BlockReader(raw)
            var values: [UInt64?] = []
            while reader.remaining > 0 {
                do { values.append(try reader.varint()) } catch {
                    values.append(nil)
                    break
                }
            }
            return values
        }
    }

    /// The same walk with ``plainVarint(_:at:)``.
    static func plainAll(_ bytes: [UInt8]) -> [UInt64?] {
        var values: [UInt64?] = []
        var offset = 0
        while offset < bytes.count {
            guard let (value, length) = plainVarint(bytes, at: offset) else {
                values.append(nil)
                break
            }
            values.append(value)
            offset += length
        }
        return values
    }

    @Test("values of every bit length, written and read back, at every distance from the end")
    func everyBitLength() {
        var random = SplitMix64(seed: 0x7661_7269_6E74)
        for bits in 0...64 {
            // The top bit set, the bits below it random.
            let low = UInt64.random(in: 0...UInt64.max, using: &random) >> UInt64(65 - max(bits, 1))
            let value: UInt64 = bits == 0 ? 0 : (1 << UInt64(bits - 1)) | low
            for padding in 0..<10 {
                var writer = BlockWriter()
                writer.varint(value)
                let length = writer.bytes.count
                for _ in 0..<padding { writer.byte(0x5A) }
                let read: (UInt64, Int)? = writer.bytes.withUnsafeBytes { raw in
                    var reader = BlockReader(raw)
                    guard let decoded = try? reader.varint() else { return nil }
                    return (decoded, reader.offset)
                }
                #expect(read?.0 == value, "\(bits) bits, \(padding) bytes after")
                #expect(read?.1 == length, "\(bits) bits, \(padding) bytes after")
            }
        }
    }

    @Test("random bytes (non-canonical varints, overlong ones, truncated ones) read as the plain decoder reads them")
    func randomBytes() {
        var random = SplitMix64(seed: 0x6C65_6231_3238)
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...40, using: &random)
            // Mostly bytes with the high bit set, so long and overlong varints are common.
            let bytes = (0..<count).map { _ in
                UInt8.random(in: 0...255, using: &random) | (Int.random(in: 0..<4, using: &random) == 0 ? 0 : 0x80)
            }
            #expect(Self.readAll(bytes) == Self.plainAll(bytes), "\(bytes)")
        }
    }
}
