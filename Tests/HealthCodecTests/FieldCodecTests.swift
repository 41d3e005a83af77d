import Foundation
import HealthCodec
import HealthModel
import Testing

@Suite("Shared field codecs")
struct FieldCodecTests {
    static let filter = SampleFilter(
        date: DatePredicate(start: -5, end: 1_000, strictStartDate: true), sources: ["b", "a"],
        uuids: [UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))], writer: 7)

    @Test("a filter's bytes: sorted lists, the writer only where it is carried")
    func filterBytes() throws {
        var wire = ByteWriter()
        wire.writeFilter(Self.filter, carryingWriter: false)
        var log = ByteWriter()
        log.writeFilter(Self.filter, carryingWriter: true)
        #expect(wire.bytes.prefix(7) == [0b0011_0111, 9, 0xD0, 0x0F, 2, 1, 0x61])
        #expect(log.bytes == [wire.bytes[0] | 0x40] + wire.bytes.dropFirst() + [7])

        var reader = ByteReader(log.bytes)
        #expect(try reader.readFilter(FieldCaps.storage, carryingWriter: true) == Self.filter)
        var strict = ByteReader(log.bytes)
        #expect(throws: CodecError.self) { try strict.readFilter(FieldCaps.storage, carryingWriter: false) }
        var withoutWriter = Self.filter
        withoutWriter.writer = nil
        var wireReader = ByteReader(wire.bytes)
        #expect(try wireReader.readFilter(FieldCaps.storage, carryingWriter: false) == withoutWriter)
    }

    @Test("a source is four strings, and lists are capped by the bytes left")
    func sources() throws {
        let source = SourceInfo(name: "Watch", bundleIdentifier: "com.example", version: "1", device: "W")
        var w = ByteWriter()
        w.writeSources([source])
        #expect(w.bytes == [1, 5] + Array("Watch".utf8) + [11] + Array("com.example".utf8) + [1, 0x31, 1, 0x57])
        var r = ByteReader(w.bytes)
        #expect(try r.readSources(FieldCaps.storage) == [source])
        var lying = ByteReader([200, 0, 0, 0])
        #expect(throws: CodecError.self) { try lying.readSources(FieldCaps.storage) }
    }
}
