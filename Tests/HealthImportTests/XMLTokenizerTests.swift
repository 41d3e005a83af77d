import HealthModel
import Testing

@testable import HealthImport

@Suite("XML tokenizer")
struct XMLTokenizerTests {
    /// A token as plain values: kind, name, depth, line, decoded attributes.
    struct Seen: Equatable, CustomStringConvertible {
        var token: XMLToken
        var name: String
        var depth: Int
        var line: Int
        var attributes: [String] = []
        var description: String { "\(token) \(name) d\(depth) l\(line) \(attributes)" }
    }

    /// Tokenizes `text` fed in pieces of `piece` bytes.
    static func tokens(_ text: String, piece: Int = Int.max) throws -> [Seen] {
        let bytes = Array(text.utf8)
        var tokenizer = XMLTokenizer(displayName: "\"t.xml\"", maxMarkupLength: 4096)
        var seen: [Seen] = []
        var offset = 0
        while true {
            if let token = try tokenizer.next() {
                if token == .endOfDocument { return seen }
                var attributes: [String] = []
                for attribute in tokenizer.attributes {
                    var decoded: [UInt8] = []
                    #expect(XMLReferences.decode(attribute.value, into: &decoded))
                    attributes.append(attribute.name.string + "=" + String(decoding: decoded, as: UTF8.self))
                }
                seen.append(
                    Seen(
                        token: token, name: tokenizer.name.string, depth: tokenizer.depth, line: tokenizer.tokenLine,
                        attributes: attributes))
                continue
            }
            if offset == bytes.count {
                tokenizer.finishInput()
            } else {
                let end = offset + min(piece, bytes.count - offset)
                bytes[offset..<end].withUnsafeBytes { tokenizer.append($0) }
                offset = end
            }
        }
    }

    static func error(_ text: String) -> String? {
        do {
            _ = try tokens(text)
            return nil
        } catch {
            return "\(error)"
        }
    }

    static let sample = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE HealthData [
        <!-- a comment with ] and > and "quotes -->
        <!ELEMENT HealthData (Record*)>
        <!ATTLIST Record type CDATA #REQUIRED note CDATA "a]b>c">
        ]>
        <HealthData locale='en_US'>
         <Record type="A" device="&lt;&lt;HKDevice&gt;, name:x&gt;" note="&quot;&apos;&amp;&#65;&#x42;&#160;">
          <MetadataEntry key="k" value="v"/>
          <!-- <Record type="hidden"/> -->
          <![CDATA[ <Record type="also hidden"/> ]]>
         </Record>
         <Record
           type = "B" />
        </HealthData>
        """

    @Test("tags, attributes, references, depth and lines; comments, CDATA and the DOCTYPE subset are skipped")
    func document() throws {
        let expected: [Seen] = [
            Seen(
                token: .startTag(selfClosing: false), name: "HealthData", depth: 1, line: 7,
                attributes: ["locale=en_US"]),
            Seen(
                token: .startTag(selfClosing: false), name: "Record", depth: 2, line: 8,
                attributes: ["type=A", "device=<<HKDevice>, name:x>", "note=\"'&AB\u{A0}"]),
            Seen(
                token: .startTag(selfClosing: true), name: "MetadataEntry", depth: 3, line: 9,
                attributes: ["key=k", "value=v"]),
            Seen(token: .endTag, name: "Record", depth: 2, line: 12),
            Seen(token: .startTag(selfClosing: true), name: "Record", depth: 2, line: 13, attributes: ["type=B"]),
            Seen(token: .endTag, name: "HealthData", depth: 1, line: 15),
        ]
        #expect(try Self.tokens(Self.sample) == expected)
    }

    @Test("feeding the document in pieces of any size gives the same tokens", arguments: [1, 2, 3, 7, 64, 1000])
    func pieces(size: Int) throws {
        #expect(try Self.tokens(Self.sample, piece: size) == (try Self.tokens(Self.sample)))
    }

    @Test(
        "malformed XML is an error naming the line and the problem",
        arguments: [
            (
                "<HealthData>\n <Record type=\"A\">\n</HealthData>",
                "line 3: </HealthData> does not close <Record> opened on line 2"
            ),
            (
                "<HealthData>\n <Record type=\"A\"/>\n",
                "line 3: the file ends inside <HealthData> opened on line 1 (truncated?)"
            ),
            ("<HealthData>\n <Record type=\"A\" val", "line 2: the file ends inside markup"),
            (
                "<HealthData>\n <Record type=\"A&bogus;\"/>\n</HealthData>",
                "line 2: bad reference \"&bogus;\" in the value of type"
            ),
            ("<HealthData>\n <Record type=\"A & B\"/>\n</HealthData>", "line 2: bad reference \"& B\""),
            (
                // A value checked once is only trusted again byte for byte: the same length is not enough.
                "<HealthData>\n <R device=\"&lt;a&gt;\"/>\n <R device=\"&lt;a&gt;\"/>\n <R device=\"&lt;a&gu;\"/>\n</HealthData>",
                "line 4: bad reference \"&gu;\" in the value of device"
            ),
            ("<HealthData>\n <Record type=\"&#0;\"/>\n</HealthData>", "line 2: bad reference \"&#0;\""),
            ("<HealthData>\n <Record type=\"&#xD800;\"/>\n</HealthData>", "line 2: bad reference \"&#xD800;\""),
            ("<HealthData>\n <Record type=A/>\n</HealthData>", "line 2: the value of type is not quoted"),
            ("<HealthData>\n <Record type/>\n</HealthData>", "line 2: attribute type has no value"),
            ("<HealthData>\n <Record type=\"a<b\"/>\n</HealthData>", "line 2: \"<\" in the value of type"),
            ("<HealthData>\n <Record type=\"a\"x=\"b\"/>\n</HealthData>", "line 2: unexpected \"x\" in <Record>"),
            ("<HealthData>\n < Record/>\n</HealthData>", "line 2: \"<\" not followed by a tag name"),
            (
                "<HealthData>\n</Record>\n</HealthData>",
                "line 2: </Record> does not close <HealthData> opened on line 1"
            ),
            ("<HealthData/>\n<HealthData/>", "line 2: a second root element <HealthData>"),
            ("<HealthData/>\ntrailing", "line 2: text outside the root element"),
            ("hello <HealthData/>", "line 1: text outside the root element"),
            ("", "line 1: no root element"),
            ("<HealthData>\n<!ENTITY x \"y\">\n</HealthData>", "line 2: unexpected markup \"<!ENTITY \""),
            ("<HealthData>\n<Record/ >\n</HealthData>", "line 2: \"/\" not followed by \">\""),
        ])
    func malformed(text: String, message: String) {
        let error = Self.error(text)
        #expect(error?.hasPrefix("\"t.xml\": malformed XML on ") == true)
        #expect(error?.contains(message) == true, "\(error ?? "no error") lacks \(message)")
    }

    @Test("markup longer than the cap and nesting deeper than the cap are refused, not buffered")
    func caps() {
        let long = "<HealthData>\n<Record type=\"" + String(repeating: "x", count: 5000) + "\"/></HealthData>"
        #expect(Self.error(long)?.contains("line 2: markup longer than 4096 bytes") == true)
        let deep = String(repeating: "<a>", count: 65) + String(repeating: "</a>", count: 65)
        #expect(Self.error(deep)?.contains("elements nested deeper than 64") == true)
        let fine = String(repeating: "<a>", count: 64) + String(repeating: "</a>", count: 64)
        #expect(Self.error(fine) == nil)
    }

    @Test("CRLF line ends count as one line each")
    func lines() throws {
        let text = "<HealthData>\r\n <Record type=\"A\"/>\r\n\r\n <Record type=\"B\"/>\r\n</HealthData>"
        #expect(try Self.tokens(text, piece: 5).map(\.line) == [1, 2, 4, 5])
    }

    @Test("a byte may stand in a name exactly when it is a letter, digit, colon, underscore, hyphen, dot or above 127")
    func nameBytes() {
        func accepts(_ byte: UInt8) -> Bool {
            let bytes = Array("<HealthData><r a".utf8) + [byte] + Array("z=\"1\"/></HealthData>".utf8)
            var tokenizer = XMLTokenizer(displayName: "t.xml")
            bytes.withUnsafeBytes { tokenizer.append($0) }
            tokenizer.finishInput()
            do {
                while try tokenizer.next() != .endOfDocument {}
                return true
            } catch {
                return false
            }
        }
        for byte in UInt8.min...UInt8.max {
            let scalar = Unicode.Scalar(byte)
            let expected =
                byte >= 128
                || (("a"..."z").contains(scalar)
                    || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                    || ":_-.".unicodeScalars.contains(scalar))
            #expect(accepts(byte) == expected, "byte \(byte)")
        }
    }
}
