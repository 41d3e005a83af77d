import Synchronization

/// `--format ndjson`: a listing's JSON array, as hkq prints it (`[`, one object a line indented by two spaces
/// and followed by a comma but the last, `]`; or `[]`), turned into the objects alone, one a line, as it is
/// written (a line that is an object already, as `changes` prints for NDJSON, passes as it is). Holds only an
/// unfinished line.
final class JSONLinesSink: TextSink {
    private let out: any TextSink
    private let partial = Mutex<[UInt8]>([])

    /// A sink writing the lines to `out`.
    init(_ out: any TextSink) { self.out = out }

    func write(_ text: String) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    func write(bytes: UnsafeRawBufferPointer) {
        let lines: [UInt8] = partial.withLock { partial in
            var lines: [UInt8] = []
            lines.reserveCapacity(partial.count + bytes.count)
            var start = 0
            for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
                if partial.isEmpty {
                    Self.append(line: bytes[start..<index], to: &lines)
                } else {
                    partial.append(contentsOf: bytes[start..<index])
                    Self.append(line: partial[...], to: &lines)
                    partial.removeAll(keepingCapacity: true)
                }
                start = index + 1
            }
            partial.append(contentsOf: bytes[start...])
            return lines
        }
        if !lines.isEmpty { lines.withUnsafeBytes { out.write(bytes: $0) } }
    }

    /// Writes an unfinished last line as it is.
    func finish() {
        let rest = partial.withLock { partial in
            defer { partial = [] }
            return partial
        }
        if !rest.isEmpty { rest.withUnsafeBytes { out.write(bytes: $0) } }
    }

    /// One line of the array as its object and a newline; nothing for the brackets.
    private static func append<Line: Collection<UInt8>>(line: Line, to lines: inout [UInt8])
    where Line.Index == Int {
        if line.elementsEqual("[".utf8) || line.elementsEqual("]".utf8) || line.elementsEqual("[]".utf8) { return }
        var range = line.startIndex..<line.endIndex
        if line.starts(with: "  ".utf8) { range = (range.lowerBound + 2)..<range.upperBound }
        if range.upperBound > range.lowerBound, line[range.upperBound - 1] == UInt8(ascii: ",") {
            range = range.lowerBound..<(range.upperBound - 1)
        }
        lines.append(contentsOf: line[range])
        lines.append(UInt8(ascii: "\n"))
    }
}
