import Foundation

/// Reads a file (or standard input) line by line in 64 KiB chunks, so a file of any size streams through a
/// bounded buffer. Lines end at `\n`; a `\r` before it and a UTF-8 byte-order mark at the start are dropped.
///
/// Not thread-safe: one reader per task.
public final class LineReader {
    /// `nil` for a reader over bytes already in memory.
    private let handle: FileHandle?
    private let closesHandle: Bool
    private var buffer: [UInt8] = []
    private var start = 0
    private var finished = false
    private var isFirstLine = true
    /// The number of the line last returned (1-based); 0 before the first.
    public private(set) var lineNumber = 0
    /// Longest line accepted, so a file without newlines cannot exhaust memory.
    public static let maxLineBytes = 1 << 20

    /// A reader over `handle`; `closesHandle` closes it on deinit (not for standard input).
    public init(handle: FileHandle, closesHandle: Bool) {
        self.handle = handle
        self.closesHandle = closesHandle
    }

    /// A reader over `bytes` (a request's body standing for standard input).
    public init(bytes: [UInt8]) {
        handle = nil
        closesHandle = false
        buffer = bytes
        finished = true
    }

    /// Opens `path` for reading; `-` is standard input.
    public convenience init(path: String) throws {
        if path == "-" {
            self.init(handle: .standardInput, closesHandle: false)
            return
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ImportError(file: path, line: nil, message: "cannot open the file for reading")
        }
        self.init(handle: handle, closesHandle: true)
    }

    deinit { if closesHandle { try? handle?.close() } }

    /// The next line without its terminator, or `nil` at the end of input. Invalid UTF-8 is repaired with U+FFFD.
    public func next() throws -> String? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                let line = take(upTo: newline)
                start = newline + 1
                return line
            }
            if finished {
                guard start < buffer.count else { return nil }
                let line = take(upTo: buffer.count)
                start = buffer.count
                return line
            }
            if buffer.count - start > LineReader.maxLineBytes {
                throw ImportError(
                    file: nil, line: lineNumber + 1, message: "the line is longer than \(LineReader.maxLineBytes) bytes"
                )
            }
            try fill()
        }
    }

    /// Reads another chunk, compacting what was already consumed.
    private func fill() throws {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        guard let chunk = try handle?.read(upToCount: 1 << 16), !chunk.isEmpty else {
            finished = true
            return
        }
        buffer.append(contentsOf: chunk)
    }

    /// Decodes `buffer[start..<end]` as one line.
    private func take(upTo end: Int) -> String {
        var lineEnd = end
        if lineEnd > start, buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
        var lineStart = start
        if isFirstLine, lineEnd - lineStart >= 3, buffer[lineStart] == 0xEF, buffer[lineStart + 1] == 0xBB,
            buffer[lineStart + 2] == 0xBF
        {
            lineStart += 3
        }
        isFirstLine = false
        lineNumber += 1
        return String(decoding: buffer[lineStart..<lineEnd], as: UTF8.self)
    }
}

/// A problem in an input file, located by file and line: `data.csv line 12: unknown quantity type "stepz"`.
public struct ImportError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file as named on the command line (`-` for standard input); `nil` when not yet known.
    public var file: String?
    /// The 1-based line number, header included; `nil` for a problem with the whole file.
    public var line: Int?
    /// What is wrong.
    public var message: String

    /// An error at `line` of `file`.
    public init(file: String?, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `FILE line N: message`.
    public var description: String {
        let name = file.map { $0 == "-" ? "standard input" : $0 }
        let location = [name, line.map { "line \($0)" }].compactMap { $0 }.joined(separator: " ")
        return location.isEmpty ? message : "\(location): \(message)"
    }
}
