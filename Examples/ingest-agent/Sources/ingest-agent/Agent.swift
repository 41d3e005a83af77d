import Foundation
import AgentSupport
import HealthClient

/// `ingest-agent FILE [--server HOST:PORT] [--subject NAME] [--token TOKEN] [--once]`
///
/// Tails FILE (CSV `type,start,end,value,unit,source` with ISO 8601 times, or JSON lines with those keys) and
/// uploads every complete line. The byte offset of the last acknowledged line is kept in `FILE.offset`, so a
/// restarted agent goes on where it stopped; content-derived UUIDs make a re-sent line a no-op anyway.
@main
struct IngestAgent {
    static func main() async throws {
        let options = AgentOptions(CommandLine.arguments.dropFirst())
        guard let path = options.file else {
            print("usage: ingest-agent FILE [--server HOST:PORT] [--subject NAME] [--token TOKEN] [--once]")
            exit(64)
        }
        let client = HealthClient(options.configuration(name: "ingest-agent"))
        defer { client.close() }
        let offsetPath = path + ".offset"
        var offset =
            UInt64(
                (try? String(contentsOfFile: offsetPath, encoding: .utf8))?.trimmingCharacters(
                    in: .whitespacesAndNewlines) ?? "") ?? 0
        var total = 0
        print("tailing \(path) from byte \(offset)")
        while true {
            let (lines, next) = try completeLines(of: path, from: offset)
            if !lines.isEmpty {
                let samples = try lines.map { try SampleLine.parse($0, subject: options.subject) }
                total += try await upload(samples, to: client)
                offset = next
                try String(offset).write(toFile: offsetPath, atomically: true, encoding: .utf8)
                print("\(lines.count) lines read, \(total) samples stored so far, at byte \(offset)")
            }
            if options.once { return }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// The complete lines after `offset` (a trailing partial line waits for its newline) and the offset after them.
    static func completeLines(of path: String, from offset: UInt64) throws -> ([Substring], UInt64) {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        let data = try handle.readToEnd() ?? Data()
        guard let lastNewline = data.lastIndex(of: UInt8(ascii: "\n")) else { return ([], offset) }
        let text = String(decoding: data[...lastNewline], as: UTF8.self)
        let lines = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        return (lines, offset + UInt64(lastNewline - data.startIndex + 1))
    }
}

/// One input line as a sample.
enum SampleLine {
    struct JSONLine: Decodable {
        var type: String
        var start: String
        var end: String?
        var value: Double
        var unit: String?
        var source: String?
    }

    /// A JSON object or a CSV line `type,start,end,value,unit,source` (end, unit and source may be empty).
    static func parse(_ line: Substring, subject: String) throws -> Sample {
        let fields: JSONLine
        if line.first == "{" {
            fields = try JSONDecoder().decode(JSONLine.self, from: Data(line.utf8))
        } else {
            let parts = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 4, let value = Double(parts[3]) else {
                throw HealthError(.invalidArgument, "not a sample line: \(line)")
            }
            fields = JSONLine(
                type: parts[0], start: parts[1], end: parts[2].isEmpty ? nil : parts[2], value: value,
                unit: parts.count > 4 && !parts[4].isEmpty ? parts[4] : nil, source: parts.count > 5 ? parts[5] : nil)
        }
        let type = try QuantityType.named(fields.type)
        let start = try Date(fields.start, strategy: .iso8601)
        let end = try fields.end.map { try Date($0, strategy: .iso8601) } ?? start
        return Sample(
            subject: subject, type: type, start: start, end: end, value: fields.value,
            unit: try fields.unit.map { try HealthUnit(parsing: $0) } ?? type.canonicalUnit,
            source: SourceInfo(name: fields.source ?? "ingest-agent"))
    }
}
