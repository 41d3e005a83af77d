import Foundation
import HKQKit
import Testing
import TestSupport

/// Inputs the fuzz harnesses of Fuzz/ found failing (Fuzz/README.md).
struct HKQFuzzRegressionTests {
    @Test("CSV finds a quote followed by a combining mark: fields are split per Unicode scalar, not per Character")
    func csvQuoteBeforeCombiningMark() throws {
        // The `csv` harness's input: U+064B, two stray bytes, a quote. Escaped, the field starts `"` U+064B,
        // which as Characters is one grapheme that hid the opening quote.
        let line = String(decoding: fuzzBytes(hex: "d98b 8b8c 22"), as: UTF8.self)
        let fields = try #require(CSV.fields(line))
        #expect(fields == [line])
        #expect(CSV.fields(String(CSV.line(fields).dropLast())) == fields)
        #expect(CSV.fields("\"\u{301}a\",b") == ["\u{301}a", "b"])
        #expect(CSV.fields("\"a\"\u{301}") == nil)
    }

    @Test("CSV.escape doubles a quote followed by a combining mark")
    func csvEscapeQuoteBeforeCombiningMark() {
        // From the `csv` harness: a field holding `"` U+0312 was written with the quote not doubled, so the line
        // read back as an unclosed quote.
        let input = String(
            decoding: fuzzBytes(hex: "3230 3234 2d30 332d 3930 5430 383a 3031 3b30 302d 3035 22cc 9269 6e"),
            as: UTF8.self)
        #expect(CSV.escape(input) == "\"2024-03-90T08:01;00-05\"\"\u{312}in\"")
        #expect(CSV.fields(String(CSV.line(["a", input]).dropLast())) == ["a", input])
    }

    @Test("a relative date with a second sign is refused, not an overflow trap")
    func relativeDateWithTwoSigns() throws {
        // From the `dates` harness: `now--06666666660000007h` read the amount as a negative number, which passed
        // the "at most 1,000,000" check and overflowed when negated and scaled to microseconds.
        let utc = try #require(TimeZone(identifier: "UTC"))
        let parser = DateArgumentParser(timeZone: utc, now: 1_710_072_000_000_000)
        let input = String(
            decoding: fuzzBytes(hex: "6e6f 772d 2d30 3636 3636 3636 3636 3630 3030 3030 3768"), as: UTF8.self)
        #expect(parser.parse(input) == nil)
        #expect(parser.parse("now--5h") == nil)
        let fiveHoursEarlier: Int64 = 1_710_072_000_000_000 - 5 * 3_600_000_000
        #expect(parser.parse("now-5h") == fiveHoursEarlier)
    }
}
