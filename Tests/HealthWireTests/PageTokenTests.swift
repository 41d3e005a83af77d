import HealthCodec
import HealthModel
import Testing

@testable import HealthWire

/// Page tokens (Protocol/PROTOCOL.md, *Page tokens*): their bytes, their text, and the tokens refused.
@Suite("Page tokens")
struct PageTokenTests {
    @Test("a position survives its token's bytes and text, for every sort and extreme values")
    func roundTrip() throws {
        var random = SplitMix64(seed: 0x70CE)
        for sort in SampleSort.allCases {
            for _ in 0..<50 {
                let start = Int64(bitPattern: random.next())
                let key = sort.sortsByEnd ? Int64(bitPattern: random.next()) : start
                let position = SamplePosition(sort: sort, key: key, start: start, anchor: random.next())
                let token = PageToken(position)
                #expect(try token.position() == position)
                let text = token.text
                #expect(text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }, "\(text)")
                #expect(PageToken(text: text) == token)
            }
        }
        let extreme = SamplePosition(sort: .endDescending, key: .max, start: .min, anchor: .max)
        #expect(try PageToken(extreme).position() == extreme)
    }

    @Test("text that is not base64url is no token; padding is accepted")
    func text() {
        #expect(PageToken(text: "") == nil)
        #expect(PageToken(text: "AQ+B") == nil)
        #expect(PageToken(text: "AQ/B") == nil)
        #expect(PageToken(text: "A Q") == nil)
        #expect(PageToken(text: "A") == nil)
        #expect(PageToken(text: "AQ==") == PageToken(bytes: [1]))
        #expect(PageToken(text: "AQ") == PageToken(bytes: [1]))
    }

    @Test(
        "bytes that are no token of this server are invalidArgument",
        arguments: [
            ([], "malformed"),
            ([2, 0, 0, 0, 0], "has format 2"),
            ([1, 4, 0, 0, 0], "malformed"),
            ([1, 0, 0, 0], "malformed"),
            ([1, 0, 0, 0, 0, 0], "malformed"),
            ([1, 0, 0x80], "malformed"),
        ] as [([UInt8], String)])
    func refused(bytes: [UInt8], message: String) {
        do {
            _ = try PageToken(bytes: bytes).position()
            Issue.record("\(bytes) decoded")
        } catch let error as HealthError {
            #expect(error.code.rawValue == ErrorCode.invalidArgument.rawValue)
            #expect(error.message.contains(message), "\(error.message)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("a start order's token whose key is not its start is refused by the query it continues")
    func startKeyMismatch() throws {
        let query = SampleQuery(
            subject: "anna", type: "heartRate",
            after: PageToken(SamplePosition(sort: .startAscending, key: 5, start: 6, anchor: 1)))
        #expect(throws: HealthError.self) { try query.checked() }
        var fine = query
        fine.after = PageToken(SamplePosition(sort: .startAscending, key: 6, start: 6, anchor: 1))
        #expect(try fine.afterPosition()?.start == 6)
    }

    @Test("an empty after, on the wire, reads as none")
    func emptyAfter() throws {
        var w = ByteWriter()
        SampleQuery(subject: "anna", type: "heartRate").encode(into: &w)
        w.writeBlob([UInt8]())
        var r = ByteReader(w.bytes)
        let decoded = try SampleQuery(from: &r, limits: .standard)
        #expect(decoded.after == nil && r.isAtEnd)
    }
}
