import Foundation
import HealthModel

/// The layouts `hkq insert` reads.
public enum SampleFileFormat: String, Sendable, CaseIterable {
    /// A header row naming the columns (type,start,end,value,unit,source[,uuid], any order), then one row per
    /// sample.
    case csv
    /// One JSON object per line with the same keys.
    case jsonl

    /// The format a file name implies: `.csv`, or `.jsonl`, `.ndjson` and `.json`; `nil` for anything else.
    public static func implied(byPath path: String) -> SampleFileFormat? {
        let lower = path.lowercased()
        if lower.hasSuffix(".csv") { return .csv }
        if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") || lower.hasSuffix(".json") { return .jsonl }
        return nil
    }
}

/// Streams samples out of a CSV or JSON-lines file (or standard input), one validated ``Sample`` at a time.
///
/// The format comes from `format`, else the file name, else the first non-blank character (`{` means JSON
/// lines). Blank lines are skipped. Every problem is an ``ImportError`` naming the file and line.
/// Not thread-safe.
public final class SampleFileReader {
    /// The file as named (`-` for standard input).
    public let path: String
    /// The layout being read.
    public private(set) var format: SampleFileFormat
    private let lines: LineReader
    private var decoder: SampleRowDecoder
    private var columns: CSVColumns?
    private var pending: (line: Int, text: String)?

    /// The columns a file must have.
    public static let requiredColumns = ["type", "start", "end", "value", "unit", "source"]
    /// The columns (CSV) or keys (JSON lines) a file may add; `metadata` is JSON lines only (an object of string
    /// or number values).
    public static let optionalColumns = ["uuid", "bundleIdentifier", "metadata"]
    /// Whether columns or keys not listed above are skipped instead of refused.
    public let ignoresUnknown: Bool

    /// Opens `path` and reads up to the first row; fails on an unreadable file or a bad CSV header. `-` reads
    /// `standardInput` when given, else the process's standard input.
    public init(
        path: String, format: SampleFileFormat?, subject: String, ignoreUnknown: Bool = false,
        standardInput: [UInt8]? = nil
    ) throws {
        self.path = path
        ignoresUnknown = ignoreUnknown
        if path == "-", let standardInput {
            lines = LineReader(bytes: standardInput)
        } else {
            lines = try LineReader(path: path)
        }
        decoder = SampleRowDecoder(subject: subject)
        self.format = format ?? SampleFileFormat.implied(byPath: path) ?? .csv
        guard let first = try nextNonBlank() else { return }
        if format == nil, SampleFileFormat.implied(byPath: path) == nil {
            self.format = first.text.first(where: { !$0.isWhitespace }) == "{" ? .jsonl : .csv
        }
        switch self.format {
        case .csv:
            columns = try CSVColumns(header: first.text, file: path, line: first.line, ignoreUnknown: ignoreUnknown)
        case .jsonl: pending = first
        }
    }

    /// Whether the last sample's UUID was derived from its content (its row had no uuid).
    public private(set) var derivedUUID = false

    /// What one row of the file holds: a sample, or why the row cannot be one.
    public enum Row: Sendable {
        case sample(Sample)
        /// The row's error names its line and the problem; the rows after it can still be read.
        case rejected(ImportError)
    }

    /// The next sample, or `nil` at the end of the input; throws for a row that is not a valid sample.
    public func next() throws -> Sample? {
        switch try nextRow() {
        case nil: return nil
        case .sample(let sample): return sample
        case .rejected(let error): throw error
        }
    }

    /// The next row, or `nil` at the end of the input; throws only when the file itself cannot be read on.
    public func nextRow() throws -> Row? {
        let next: (line: Int, text: String)
        if let pending {
            next = pending
            self.pending = nil
        } else {
            guard let line = try nextNonBlank() else { return nil }
            next = line
        }
        do {
            let row = try format == .csv ? csvRow(next.text) : jsonRow(next.text)
            derivedUUID = row.uuid.isEmpty
            return .sample(try decoder.sample(row))
        } catch let error as HealthError {
            return .rejected(ImportError(file: path, line: next.line, message: error.message))
        }
    }

    private func nextNonBlank() throws -> (line: Int, text: String)? {
        do {
            while let line = try lines.next() {
                if !line.allSatisfy(\.isWhitespace) { return (lines.lineNumber, line) }
            }
            return nil
        } catch var error as ImportError {
            error.file = path
            throw error
        } catch {
            throw ImportError(file: path, line: nil, message: "cannot read: \(error.localizedDescription)")
        }
    }

    private func csvRow(_ text: String) throws -> SampleRow {
        guard let columns, let fields = CSV.fields(text) else {
            throw HealthError(.invalidSample, "malformed CSV (a quote is not closed, or text follows a closing quote)")
        }
        return try columns.row(fields)
    }

    private func jsonRow(_ text: String) throws -> SampleRow {
        let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8))
        guard let object = parsed as? [String: Any] else {
            let hint = text.first(where: { !$0.isWhitespace }) == "[" ? "; write one object per line (JSON lines)" : ""
            throw HealthError(.invalidSample, "not a JSON object\(hint)")
        }
        if !ignoresUnknown,
            let unknown = object.keys.sorted().first(where: {
                !Self.requiredColumns.contains($0) && !Self.optionalColumns.contains($0)
            })
        {
            throw HealthError(
                .invalidSample,
                "unknown key \"\(unknown)\" (known: \((Self.requiredColumns + Self.optionalColumns).joined(separator: ", "))"
                    + "; --ignore-unknown skips it)")
        }
        func field(_ key: String, required: Bool) throws -> String {
            switch object[key] {
            case nil, is NSNull:
                if required { throw HealthError(.invalidSample, "missing key \"\(key)\"") }
                return ""
            case let text as String: return text
            case let number as NSNumber where key == "value": return number.stringValue
            default: throw HealthError(.invalidSample, "key \"\(key)\" is not a string")
            }
        }
        return SampleRow(
            type: try field("type", required: true), start: try field("start", required: true),
            end: try field("end", required: false), value: try field("value", required: true),
            unit: try field("unit", required: false), source: try field("source", required: true),
            uuid: try field("uuid", required: false), bundleIdentifier: try field("bundleIdentifier", required: false),
            metadata: try Self.metadata(object["metadata"]))
    }

    /// The `metadata` object of a JSON row: string values stay strings, numbers and booleans become numbers.
    private static func metadata(_ value: Any?) throws -> [String: MetadataValue] {
        switch value {
        case nil, is NSNull: return [:]
        case let object as [String: Any]:
            var metadata: [String: MetadataValue] = [:]
            for (key, value) in object {
                switch value {
                case let text as String: metadata[key] = .string(text)
                case let number as NSNumber where number.doubleValue.isFinite:
                    metadata[key] = .number(number.doubleValue)
                default: throw HealthError(.invalidSample, "metadata \"\(key)\" is not a string or a number")
                }
            }
            return metadata
        default: throw HealthError(.invalidSample, "key \"metadata\" is not an object")
        }
    }
}

/// Where each field sits in the rows of a CSV file, read from its header.
struct CSVColumns {
    let positions: [String: Int]
    let width: Int

    /// Reads the header; a missing required column is an error, and so is an unknown one unless `ignoreUnknown`.
    init(header: String, file: String, line: Int, ignoreUnknown: Bool) throws {
        guard let names = CSV.fields(header) else {
            throw ImportError(file: file, line: line, message: "malformed CSV header")
        }
        var positions: [String: Int] = [:]
        for (index, name) in names.enumerated() {
            let key = name.trimmingWhitespace.lowercased()
            if positions[key] == nil { positions[key] = index }
        }
        let known = SampleFileReader.requiredColumns + ["uuid", "bundleidentifier"]
        if !ignoreUnknown, let unknown = names.first(where: { !known.contains($0.trimmingWhitespace.lowercased()) }) {
            throw ImportError(
                file: file, line: line,
                message:
                    "unknown column \"\(unknown)\" (known: \(SampleFileReader.requiredColumns.joined(separator: ",")),"
                    + "uuid,bundleIdentifier; --ignore-unknown skips it)")
        }
        let missing = SampleFileReader.requiredColumns.filter { positions[$0] == nil }
        if !missing.isEmpty {
            let expected = SampleFileReader.requiredColumns.joined(separator: ",") + "[,uuid]"
            throw ImportError(
                file: file, line: line,
                message: "the CSV header lacks \(missing.joined(separator: ", ")); expected the columns \(expected)")
        }
        self.positions = positions
        width = names.count
    }

    /// The row's fields by name; a row with another number of fields than the header is an error.
    func row(_ fields: [String]) throws -> SampleRow {
        guard fields.count == width else {
            throw HealthError(.invalidSample, "expected \(width) fields as in the header, found \(fields.count)")
        }
        func field(_ name: String) -> String { positions[name].map { fields[$0] } ?? "" }
        return SampleRow(
            type: field("type").trimmingWhitespace, start: field("start"), end: field("end"),
            value: field("value"), unit: field("unit").trimmingWhitespace, source: field("source"),
            uuid: field("uuid"), bundleIdentifier: field("bundleidentifier"))
    }
}
