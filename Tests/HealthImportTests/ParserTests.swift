import Foundation
import HealthModel
import Testing

@testable import HealthImport

@Suite("Parsers and hashes")
struct ParserTests {
    static func parseDate(_ text: String) -> Timestamp? {
        Array(text.utf8).withUnsafeBufferPointer { ExportDateParser.parse($0) }
    }

    static func parseNumber(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer { DecimalParser.parse($0) }
    }

    @Test(
        "dates in every accepted form give the instant Foundation computes",
        arguments: [
            ("2017-01-21 15:53:00 -0400", (2017, 1, 21, 15, 53, 0, -4)),
            ("2017-01-21T15:53:00-04:00", (2017, 1, 21, 15, 53, 0, -4)),
            ("20170121155300-0400", (2017, 1, 21, 15, 53, 0, -4)),
            ("2016-02-29 23:59:59 +0000", (2016, 2, 29, 23, 59, 59, 0)),
            ("2000-02-29 00:00:00 Z", (2000, 2, 29, 0, 0, 0, 0)),
            ("1969-12-31 23:59:59 +0000", (1969, 12, 31, 23, 59, 59, 0)),
            ("2038-01-19 03:14:08 +1400", (2038, 1, 19, 3, 14, 8, 14)),
            ("1900-03-01 12:00:00 -1100", (1900, 3, 1, 12, 0, 0, -11)),
        ])
    func dates(text: String, expected: (Int, Int, Int, Int, Int, Int, Int)) {
        let (y, mo, d, h, mi, s, offset) = expected
        #expect(Self.parseDate(text) == Fixtures.instant(y, mo, d, h, mi, s, offsetHours: offset))
    }

    @Test(
        "dates written by phones with a 12-hour clock or other digits give the same instant",
        arguments: [
            ("2024-09-21 7:57:00\u{202F}pm +1000", (2024, 9, 21, 19, 57, 0, 10)),
            ("2024-09-21 7:57:00 AM +1000", (2024, 9, 21, 7, 57, 0, 10)),
            ("2024-09-21 12:05:09\u{A0}a.m. +1000", (2024, 9, 21, 0, 5, 9, 10)),
            ("2024-09-21 12:05:09 PM +10:00", (2024, 9, 21, 12, 5, 9, 10)),
            ("2024-09-21 7:57:00 +1000", (2024, 9, 21, 7, 57, 0, 10)),
            (
                "\u{662}\u{660}\u{662}\u{664}-\u{660}\u{669}-\u{662}\u{661} \u{661}\u{669}:\u{665}\u{667}:\u{660}\u{660} +\u{660}\u{663}\u{660}\u{660}",
                (2024, 9, 21, 19, 57, 0, 3)
            ),
            ("\u{6F2}\u{6F0}\u{6F2}\u{6F4}-\u{6F0}\u{6F9}-\u{6F2}\u{6F1} 19:57:00 +0300", (2024, 9, 21, 19, 57, 0, 3)),
        ])
    func localizedDates(text: String, expected: (Int, Int, Int, Int, Int, Int, Int)) {
        let (y, mo, d, h, mi, s, offset) = expected
        #expect(Self.parseDate(text) == Fixtures.instant(y, mo, d, h, mi, s, offsetHours: offset), "\(text)")
    }

    @Test(
        "a 12-hour clock needs an hour from 1 to 12 and a marker it knows",
        arguments: [
            "2024-09-21 13:57:00 PM +1000", "2024-09-21 0:57:00 AM +1000", "2024-09-21 7:57:00 nachm. +1000",
            "2024-09-21 7:57:00 PM", "2024-09-21 7:7:00 PM +1000", "2024-9-21 7:57:00 PM  +1000",
        ])
    func badLocalizedDates(text: String) {
        #expect(Self.parseDate(text) == nil)
    }

    @Test("half-hour offsets count their minutes")
    func halfHourOffset() {
        let utc = Fixtures.instant(2017, 1, 21, 10, 0, 0)
        #expect(Self.parseDate("2017-01-21 15:30:00 +0530") == utc)
        #expect(Self.parseDate("20170121153000+0530") == utc)
    }

    @Test(
        "malformed dates are refused",
        arguments: [
            "", "2017-01-21", "2017-01-21 15:53:00", "2017-01-21 15:53:00 -04", "2017-01-21 15:53:00 -0460",
            "2017-01-21 15:53:00 -1900", "2017-00-21 15:53:00 -0400", "2017-01-32 15:53:00 -0400",
            "2100-02-29 15:53:00 -0400", "2017-01-21 15:60:00 -0400", "2017-01-21 15:53:60 -0400",
            "2017/01/21 15:53:00 -0400", "2017-01-21 15:53:00 +04000", "201701211553-0400", "2017012115530a-0400",
            "2017-01-21 15:53:00  -0400", "2017-0a-21 15:53:00 -0400",
        ])
    func badDates(text: String) {
        #expect(Self.parseDate(text) == nil)
    }

    @Test(
        "decimal numbers parse exactly as the standard library does",
        arguments: [
            "0", "13", "-3.5", "+2", "0.97", "6.08333", ".5", "5.", "1.2e-05", "1E3", "2e+2", "22.96",
            "0.1", "0.30000000000000004", "123456789012345678901234", "1.7976931348623157e308", "4.9e-324",
            "0.000000000000000000000000001", "9007199254740993", "1e22", "1e23", "-0",
        ])
    func numbers(text: String) {
        let parsed = Self.parseNumber(text)
        #expect(parsed != nil)
        #expect(parsed?.bitPattern == Double(text)?.bitPattern, "\(text)")
    }

    @Test(
        "only plain decimals are numbers",
        arguments: ["", "-", ".", "e5", "1e", "1e+", "1.2.3", "0x10", "inf", "nan", " 1", "1 ", "1,5", "1_000", "--1"])
    func notNumbers(text: String) {
        #expect(Self.parseNumber(text) == nil)
    }

    @Test("FNV-1a 128 matches the published test vectors")
    func fnv128() {
        func hex(_ text: String) -> String {
            var hash = ContentHash128()
            hash.add(text)
            return String(format: "%016llx%016llx", hash.high, hash.low)
        }
        #expect(hex("") == "6c62272e07bb014262b821756295c58d")
        #expect(hex("a") == "d228cb696f1a8caf78912b704e4a8964")
        #expect(hex("foobar") == "343e1662793c64bf6f0d3597ba446f18")
    }

    @Test("content UUIDs carry version 8 and the RFC variant")
    func uuidBits() {
        var hash = ContentHash128()
        hash.add("anything")
        let uuid = hash.uuid.uuid
        #expect(uuid.6 >> 4 == 8)
        #expect(uuid.8 >> 6 == 0b10)
        #expect(hash.uuid.uuidString.dropFirst(14).first == "8")
    }

    @Test(
        "device descriptions shorten to the hardware, else the model or name; other forms stay whole",
        arguments: [
            (
                "<<HKDevice: 0x11938b8e0>, name:iPhone, manufacturer:Apple, model:iPhone, hardware:iPhone6,1, software:9.2.1>",
                "iPhone6,1"
            ),
            ("<<HKDevice: 0x1>, name:Apple Watch, manufacturer:Apple, model:Watch, hardware:Watch3,2>", "Watch3,2"),
            ("<<HKDevice: 0x1>, name:Scale, manufacturer:Withings, model:WBS01, software:1>", "WBS01"),
            ("<<HKDevice: 0x1>, name:Cuff>", "Cuff"),
            ("<<HKDevice: 0x1>>", ""),
            ("Polar H10", "Polar H10"),
        ])
    func devices(text: String, expected: String) {
        let short = Array(text.utf8).withUnsafeBufferPointer { DeviceDescription.shortForm($0).string }
        #expect(short == expected)
    }

    @Test("the interning cache finds what it holds and starts over when full")
    func cache() {
        var cache = ByteKeyedCache<Int>(limit: 3)
        func key(_ text: String, _ body: (ByteSpan) -> Void) { Array(text.utf8).withUnsafeBufferPointer(body) }
        for (i, text) in ["a", "b", "c"].enumerated() { key(text) { cache.insert(i, for: $0) } }
        key("b") { #expect(cache.value(for: $0) == 1) }
        key("bb") { #expect(cache.value(for: $0) == nil) }
        key("d") { cache.insert(3, for: $0) }
        #expect(cache.count == 1)
        key("a") { #expect(cache.value(for: $0) == nil) }
        key("d") { #expect(cache.value(for: $0) == 3) }
    }

    @Test("XML references decode to UTF-8 and malformed ones are found")
    func references() {
        func decode(_ text: String) -> String? {
            var out: [UInt8] = []
            let ok = Array(text.utf8).withUnsafeBufferPointer { XMLReferences.decode($0, into: &out) }
            return ok ? String(decoding: out, as: UTF8.self) : nil
        }
        #expect(decode("a&amp;b&lt;&gt;&quot;&apos;&#233;&#x1F600;&#X41;") == nil)
        #expect(decode("a&amp;b&lt;&gt;&quot;&apos;&#233;&#x1F600;") == "a&b<>\"'é😀")
        #expect(decode("&#x110000;") == nil)
        #expect(decode("&#;") == nil)
        #expect(decode("&#x;") == nil)
        #expect(decode("&#12345678901;") == nil)
        #expect(decode("&AMP;") == nil)
    }
}
