import Foundation
import HealthModel

/// What ``XMLTokenizer/next()`` found.
enum XMLToken: Equatable {
    /// A start tag; ``XMLTokenizer/name`` and ``XMLTokenizer/attributes`` describe it.
    case startTag(selfClosing: Bool)
    /// An end tag; ``XMLTokenizer/name`` is its name.
    case endTag
    /// The input ended after a complete root element.
    case endOfDocument
}

/// One attribute of the current start tag, as raw bytes of the window.
struct XMLAttribute {
    /// The attribute name.
    var name: ByteSpan
    /// The value between the quotes, references not yet decoded.
    var value: ByteSpan
    /// Whether the value holds `&` references (checked well formed) that decoding replaces.
    var hasReferences: Bool
}

/// Heap memory the tokenizer's window lives in; replaced, never resized, when the window must grow.
final class ByteWindowStorage {
    /// The first byte.
    let base: UnsafeMutablePointer<UInt8>
    /// Bytes allocated.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }
}

/// A byte-level, incremental XML tokenizer made for Apple Health exports: start and end tags with attributes.
///
/// Feed bytes with ``append(_:)`` and pull tokens with ``next()``, which returns `nil` when it needs more input;
/// after ``finishInput()`` it reports ``XMLToken/endOfDocument`` or throws. Text content, comments, processing
/// instructions, CDATA sections and the DOCTYPE (with its internal subset) are skipped. It checks what matters
/// for trusting a stream: tags nest and match, attribute values are quoted and their references well formed,
/// one root element, no markup longer than ``maxMarkupLength``, no nesting deeper than ``maxDepth``. Lines are
/// counted for messages. Spans it hands out point into its window and stay valid until the next ``append(_:)``.
/// A struct so the hot loop pays no dynamic exclusivity checks; its window storage is shared by copies, so use
/// one instance only (never copy it). Not thread-safe.
struct XMLTokenizer {
    /// Longest single piece of markup (a tag, comment, DOCTYPE) accepted, so memory stays bounded.
    let maxMarkupLength: Int
    /// Deepest element nesting accepted.
    let maxDepth: Int
    /// Name of the file, quoted in messages.
    let displayName: String

    /// Name of the tag of the last token.
    private(set) var name = ByteSpan(start: nil, count: 0)
    /// Attributes of the last start tag.
    private(set) var attributes: [XMLAttribute] = []
    /// Depth of the element of the last token (the root is 1).
    private(set) var depth = 0
    /// Line on which the last token's tag starts (1-based).
    private(set) var tokenLine = 1

    private var buffer: ByteWindowStorage
    private var count = 0
    private var position = 0
    private var inputFinished = false
    /// Bytes dropped from the front of the window so far (the window's offset in the document).
    private var discarded = 0
    private var documentEnded = false

    /// Lines are counted lazily: `line` is the line at offset `lineMark` of the window.
    private var line = 1
    private var lineMark = 0

    /// Names of the open elements, concatenated, with where each ends and the line it opened on.
    private var openNames: [UInt8] = []
    private var openNameEnds: [Int] = []
    private var openLines: [Int] = []
    private var rootSeen = false
    /// The last attribute value with references found well formed: exports repeat the same `device="&lt;…&gt;"`
    /// on every record: checked once, then compared (``repeatsLastValidReferences(_:)``).
    private var lastValidReferences: [UInt8] = []

    /// A tokenizer for the file `displayName`.
    init(displayName: String, maxMarkupLength: Int = 1 << 20, maxDepth: Int = 64) {
        self.displayName = displayName
        self.maxMarkupLength = maxMarkupLength
        self.maxDepth = maxDepth
        buffer = ByteWindowStorage(capacity: 256 * 1024)
    }

    /// Adds the next bytes of the document. Invalidates every span handed out so far.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        let storage = buffer.base
        if position > 0 {
            _ = lineNumber(at: position)
            let kept = count - position
            if kept > 0 { storage.update(from: storage + position, count: kept) }
            lineMark -= position
            discarded += position
            count = kept
            position = 0
        }
        if count + bytes.count > buffer.capacity {
            let bigger = ByteWindowStorage(capacity: max(count + bytes.count, 2 * buffer.capacity))
            bigger.base.initialize(from: storage, count: count)
            buffer = bigger
        }
        UnsafeMutableRawPointer(buffer.base + count).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        count += bytes.count
    }

    /// Declares that no more bytes will come: ``next()`` then finishes the document or throws.
    mutating func finishInput() { inputFinished = true }

    /// The next tag, or `nil` when more input is needed. Throws a ``HealthError`` naming the line for malformed
    /// XML.
    mutating func next() throws -> XMLToken? {
        if documentEnded { return .endOfDocument }
        while true {
            let window = ByteSpan(start: buffer.base, count: count)
            var lt = position
            while lt < window.count, window[lt] != ASCII.lessThan { lt += 1 }
            try checkText(window.slice(position..<lt), at: position)
            position = lt
            if lt == count {
                guard inputFinished else { return nil }
                return try endDocument()
            }
            switch try scanMarkup(window, at: lt) {
            case .needMore:
                if inputFinished { throw malformed("the file ends inside markup", at: lt) }
                try checkLength(from: lt, to: count)
                return nil
            case .skipped(let end):
                try checkLength(from: lt, to: end)
                position = end
            case .token(let token, let end):
                try checkLength(from: lt, to: end)
                position = end
                return token
            }
        }
    }

    /// The line of window offset `offset`, counting newlines from the last offset asked about.
    mutating func lineNumber(at offset: Int) -> Int {
        if offset >= lineMark {
            line += XMLTokenizer.newlines(
                in: UnsafeBufferPointer(start: buffer.base + lineMark, count: offset - lineMark))
        } else {
            line -= XMLTokenizer.newlines(
                in: UnsafeBufferPointer(start: buffer.base + offset, count: lineMark - offset))
        }
        lineMark = offset
        return line
    }

    /// Number of `\n` bytes in `bytes`, found with `memchr` (vectorised in the C library): exports hold one record
    /// of a few hundred bytes a line, so this jumps from line to line instead of testing every byte.
    static func newlines(in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        guard var cursor = UnsafeRawPointer(bytes.baseAddress) else { return 0 }
        let end = cursor + bytes.count
        var total = 0
        while cursor < end, let found = memchr(cursor, Int32(ASCII.newline), end - cursor) {
            total += 1
            cursor = UnsafeRawPointer(found) + 1
        }
        return total
    }

    // MARK: - Markup

    private enum Scan {
        case needMore
        case skipped(end: Int)
        case token(XMLToken, end: Int)
    }

    private mutating func scanMarkup(_ window: ByteSpan, at lt: Int) throws -> Scan {
        guard lt + 1 < window.count else { return .needMore }
        switch window[lt + 1] {
        case ASCII.question:
            return find("?>", in: window, from: lt + 2).map { .skipped(end: $0) } ?? .needMore
        case ASCII.bang:
            return try scanDeclaration(window, at: lt)
        case ASCII.slash:
            return try scanEndTag(window, at: lt)
        default:
            return try scanStartTag(window, at: lt)
        }
    }

    /// `<!--…-->`, `<![CDATA[…]]>` or `<!DOCTYPE …>`.
    private mutating func scanDeclaration(_ window: ByteSpan, at lt: Int) throws -> Scan {
        let rest = window.slice(lt..<window.count)
        if rest.hasPrefix("<!--") {
            return find("-->", in: window, from: lt + 4).map { .skipped(end: $0) } ?? .needMore
        }
        if rest.hasPrefix("<![CDATA[") {
            if openNameEnds.isEmpty { throw malformed("CDATA outside the root element", at: lt) }
            return find("]]>", in: window, from: lt + 9).map { .skipped(end: $0) } ?? .needMore
        }
        if rest.hasPrefix("<!DOCTYPE") {
            if rootSeen { throw malformed("DOCTYPE inside the document", at: lt) }
            return scanDoctype(window, from: lt + 9).map { .skipped(end: $0) } ?? .needMore
        }
        if rest.count < 9 { return .needMore }
        throw malformed("unexpected markup \"\(rest.slice(0..<9).string)\"", at: lt)
    }

    /// The end of a DOCTYPE declaration whose body starts at `from`, skipping quoted strings, the internal
    /// subset and comments in it; `nil` when the window ends first.
    private func scanDoctype(_ window: ByteSpan, from: Int) -> Int? {
        var i = from
        var inSubset = false
        while i < window.count {
            let byte = window[i]
            if byte == ASCII.quote || byte == ASCII.apostrophe {
                var close = i + 1
                while close < window.count, window[close] != byte { close += 1 }
                guard close < window.count else { return nil }
                i = close + 1
                continue
            }
            if inSubset {
                if byte == ASCII.lessThan {
                    guard i + 4 <= window.count else { return nil }
                    if window.slice(i..<i + 4).equals("<!--") {
                        guard let end = find("-->", in: window, from: i + 4) else { return nil }
                        i = end
                        continue
                    }
                } else if byte == ASCII.rightBracket {
                    inSubset = false
                }
            } else if byte == ASCII.leftBracket {
                inSubset = true
            } else if byte == ASCII.greaterThan {
                return i + 1
            }
            i += 1
        }
        return nil
    }

    private mutating func scanEndTag(_ window: ByteSpan, at lt: Int) throws -> Scan {
        var i = lt + 2
        let nameStart = i
        while i < window.count, isNameByte(window[i]) { i += 1 }
        let nameEnd = i
        while i < window.count, ASCII.isSpace(window[i]) { i += 1 }
        guard i < window.count else { return .needMore }
        guard nameEnd > nameStart, window[i] == ASCII.greaterThan else {
            throw malformed("malformed end tag", at: i)
        }
        name = window.slice(nameStart..<nameEnd)
        attributes.removeAll(keepingCapacity: true)
        try closeElement(at: lt)
        return .token(.endTag, end: i + 1)
    }

    private mutating func scanStartTag(_ window: ByteSpan, at lt: Int) throws -> Scan {
        var i = lt + 1
        while i < window.count, isNameByte(window[i]) { i += 1 }
        guard i < window.count else { return .needMore }
        guard i > lt + 1 else { throw malformed("\"<\" not followed by a tag name", at: lt) }
        let tagName = window.slice(lt + 1..<i)
        attributes.removeAll(keepingCapacity: true)
        var selfClosing = false
        while true {
            let beforeSpace = i
            while i < window.count, ASCII.isSpace(window[i]) { i += 1 }
            guard i < window.count else { return .needMore }
            let byte = window[i]
            if byte == ASCII.greaterThan {
                i += 1
                break
            }
            if byte == ASCII.slash {
                guard i + 1 < window.count else { return .needMore }
                guard window[i + 1] == ASCII.greaterThan else { throw malformed("\"/\" not followed by \">\"", at: i) }
                i += 2
                selfClosing = true
                break
            }
            guard i > beforeSpace else {
                throw malformed("unexpected \"\(window.slice(i..<i + 1).string)\" in <\(tagName.clipped())>", at: i)
            }
            let nameStart = i
            while i < window.count, isNameByte(window[i]) { i += 1 }
            guard i < window.count else { return .needMore }
            guard i > nameStart else {
                throw malformed("unexpected \"\(window.slice(i..<i + 1).string)\" in <\(tagName.clipped())>", at: i)
            }
            let attributeName = window.slice(nameStart..<i)
            while i < window.count, ASCII.isSpace(window[i]) { i += 1 }
            guard i < window.count else { return .needMore }
            guard window[i] == ASCII.equals else {
                throw malformed("attribute \(attributeName.clipped()) has no value", at: i)
            }
            i += 1
            while i < window.count, ASCII.isSpace(window[i]) { i += 1 }
            guard i < window.count else { return .needMore }
            let quote = window[i]
            guard quote == ASCII.quote || quote == ASCII.apostrophe else {
                throw malformed("the value of \(attributeName.clipped()) is not quoted", at: i)
            }
            i += 1
            let valueStart = i
            var hasReferences = false
            while true {
                i = XMLTokenizer.nextSpecial(window, from: i, quote: quote)
                guard i < window.count else { return .needMore }
                let byte = window[i]
                if byte == quote { break }
                if byte == ASCII.lessThan {
                    throw malformed("\"<\" in the value of \(attributeName.clipped())", at: i)
                }
                hasReferences = true
                i += 1
            }
            let value = window.slice(valueStart..<i)
            if hasReferences, !repeatsLastValidReferences(value) {
                if let bad = XMLReferences.firstInvalid(in: value) {
                    let text = value.slice(bad..<min(value.count, bad + XMLReferences.maxLength)).string
                    throw malformed(
                        "bad reference \"\(text)\" in the value of \(attributeName.clipped())", at: valueStart + bad)
                }
                lastValidReferences.removeAll(keepingCapacity: true)
                lastValidReferences.append(contentsOf: value)
            }
            i += 1
            attributes.append(XMLAttribute(name: attributeName, value: value, hasReferences: hasReferences))
        }
        name = tagName
        try openElement(at: lt, selfClosing: selfClosing)
        return .token(.startTag(selfClosing: selfClosing), end: i)
    }

    // MARK: - Nesting

    private mutating func openElement(at lt: Int, selfClosing: Bool) throws {
        if rootSeen && openNameEnds.isEmpty { throw malformed("a second root element <\(name.clipped())>", at: lt) }
        rootSeen = true
        tokenLine = lineNumber(at: lt)
        depth = openNameEnds.count + 1
        if selfClosing { return }
        guard openNameEnds.count < maxDepth else { throw malformed("elements nested deeper than \(maxDepth)", at: lt) }
        openNames.append(contentsOf: name)
        openNameEnds.append(openNames.count)
        openLines.append(tokenLine)
    }

    private mutating func closeElement(at lt: Int) throws {
        tokenLine = lineNumber(at: lt)
        guard let end = openNameEnds.last else {
            throw malformed("</\(name.clipped())> closes no element", at: lt)
        }
        let start = openNameEnds.count > 1 ? openNameEnds[openNameEnds.count - 2] : 0
        let matches = openNames.withUnsafeBufferPointer { $0.slice(start..<end).elementsEqual(name) }
        guard matches else {
            let open = String(decoding: openNames[start..<end], as: UTF8.self)
            throw malformed("</\(name.clipped())> does not close <\(open)> opened on line \(openLines.last!)", at: lt)
        }
        depth = openNameEnds.count
        openNames.removeLast(end - start)
        openNameEnds.removeLast()
        openLines.removeLast()
    }

    private mutating func endDocument() throws -> XMLToken {
        guard rootSeen else { throw malformed("no root element", at: count) }
        if let end = openNameEnds.last {
            let start = openNameEnds.count > 1 ? openNameEnds[openNameEnds.count - 2] : 0
            let open = String(decoding: openNames[start..<end], as: UTF8.self)
            throw malformed(
                "the file ends inside <\(open)> opened on line \(openLines.last!) (truncated?)", at: count)
        }
        documentEnded = true
        depth = 0
        return .endOfDocument
    }

    // MARK: - Helpers

    /// Refuses markup longer than ``maxMarkupLength``, whether complete or still arriving.
    private mutating func checkLength(from start: Int, to end: Int) throws {
        if end - start > maxMarkupLength { throw malformed("markup longer than \(maxMarkupLength) bytes", at: start) }
    }

    /// Text between tags is ignored, except that only white space may stand outside the root element.
    private mutating func checkText(_ text: ByteSpan, at offset: Int) throws {
        guard openNameEnds.isEmpty else { return }
        for (i, byte) in text.enumerated() where !ASCII.isSpace(byte) {
            // A UTF-8 byte order mark may open the file.
            if discarded + offset + i < 3 && !rootSeen && (byte == 0xEF || byte == 0xBB || byte == 0xBF) { continue }
            throw malformed("text outside the root element", at: offset + i)
        }
    }

    /// Offset just past the first `literal` at or after `from`, or `nil`.
    private func find(_ literal: StaticString, in window: ByteSpan, from: Int) -> Int? {
        let n = literal.utf8CodeUnitCount
        let first = literal.utf8Start[0]
        var i = from
        while i + n <= window.count {
            if window[i] == first, window.slice(i..<i + n).equals(literal) { return i + n }
            i += 1
        }
        return nil
    }

    /// Offset of the first `quote`, `<` or `&` at or after `from`, or the window's end; eight bytes at a time
    /// (a byte of `word ^ pattern` is zero exactly where the word holds the pattern's byte).
    @inline(__always)
    static func nextSpecial(_ window: ByteSpan, from: Int, quote: UInt8) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        let quotes = UInt64(quote) &* ones
        let lessThans = UInt64(ASCII.lessThan) &* ones
        let ampersands = UInt64(ASCII.ampersand) &* ones
        @inline(__always) func zeroBytes(_ x: UInt64) -> UInt64 { ~(((x & low7) &+ low7) | x | low7) }
        var i = from
        if let base = window.baseAddress {
            while i + 8 <= window.count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let hits = zeroBytes(word ^ quotes) | zeroBytes(word ^ lessThans) | zeroBytes(word ^ ampersands)
                if hits != 0 { return i + hits.trailingZeroBitCount / 8 }
                i += 8
            }
        }
        while i < window.count {
            let byte = window[i]
            if byte == quote || byte == ASCII.lessThan || byte == ASCII.ampersand { return i }
            i += 1
        }
        return i
    }

    /// Whether `value` is byte for byte the last value with references found well formed.
    @inline(__always)
    private func repeatsLastValidReferences(_ value: ByteSpan) -> Bool {
        guard value.count == lastValidReferences.count, let base = value.baseAddress else { return false }
        return lastValidReferences.withUnsafeBytes { memcmp(base, $0.baseAddress!, value.count) == 0 }
    }

    @inline(__always)
    private func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, ASCII.colon, 0x5F, ASCII.minus, ASCII.dot, 0x80...0xFF: true
        default: false
        }
    }

    private mutating func malformed(_ problem: String, at offset: Int) -> HealthError {
        HealthError(.malformedPayload, "\(displayName): malformed XML on line \(lineNumber(at: offset)): \(problem)")
    }
}
