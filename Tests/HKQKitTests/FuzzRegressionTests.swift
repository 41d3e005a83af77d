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
            decoding: fuzzBytes(hex: "3230 3234 2d30 332d 3930 5430 383a 3031 3b30 302d 3035 22cc 9269 6e"), as: UTF8.self)
        #expect(CSV.escape(input) == "\"2024-03-90T08:01;00-05\"\"\u{312}in\"")
        #expect(CSV.fields(String(CSV.line(["a", input]).dropLast())) == ["a", input])
    }
}
