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
}
