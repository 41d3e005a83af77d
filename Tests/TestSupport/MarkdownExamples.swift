import Foundation

/// The examples of a Markdown file (README.md, docs/OUTPUT.md, …) as the example test runs them: its fenced blocks
/// in order, each with the `<!-- readme-test: … -->` directives written on the lines just before it.
///
/// A block holding lines that start with `$ ` is a command block: each such line is a command (with the lines
/// after it while one ends with a backslash, as in a shell), and the lines after it up to the next command
/// (trailing blank lines left out) are what the command prints, standard output and standard error as they
/// interleave. Other blocks are shown text, used only when a directive names them (`file NAME`). A fence may be
/// indented (a block inside a list item): its indentation is taken off the block's lines.
public struct MarkdownExamples: Sendable {
    /// One fenced block.
    public struct Block: Sendable {
        /// The 1-based line of the opening fence in the file.
        public var line: Int
        /// The directives on the lines before the fence, in order.
        public var directives: [Directive]
        /// The lines between the fences.
        public var lines: [String]
        /// The block's commands with what each prints; empty for a block that shows no `$ ` line.
        public var steps: [Step]
    }

    /// A command of a block and the output the file shows for it.
    public struct Step: Sendable {
        /// The 1-based line of the `$ ` line in the file.
        public var line: Int
        /// The command after `$ `.
        public var command: String
        /// The lines shown after it.
        public var expected: [String]
    }

    /// What a `<!-- readme-test: … -->` comment asks for the block after it.
    public enum Directive: Sendable, Equatable {
        /// `fresh`: stop the examples' servers and continue in a new working directory holding only the files
        /// written so far.
        case fresh
        /// `server ADDRESS [http=PORT] [HKD ARGUMENTS]`: start hkd (on a free port) for the address the examples
        /// name, its HTTP API (when given) for the port the examples name.
        case server(address: String, httpPort: String?, arguments: [String])
        /// `file NAME`: write the block's text to NAME in the working directory instead of running it.
        case file(String)
        /// `fixture NAME PATH`: copy PATH, relative to the package root, to NAME in the working directory.
        case fixture(name: String, path: String)
        /// `not run: REASON`: the block cannot run in a test, for the reason given.
        case notRun(String)
    }

    /// A directive the parser does not understand, with its line.
    public struct ParseError: Error, CustomStringConvertible {
        public var line: Int
        public var text: String
        public var description: String { "line \(line): unknown readme-test directive \"\(text)\"" }
    }

    /// The blocks in the order of the file.
    public var blocks: [Block]

    /// Whether the file has anything to run: a command block or a directive.
    public var hasExamples: Bool {
        blocks.contains { !$0.steps.isEmpty || !$0.directives.isEmpty }
    }

    /// Parses Markdown text.
    /// - Throws: ``ParseError`` for a `readme-test` comment that names no known directive.
    public init(markdown: String) throws {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [Block] = []
        var pending: [Directive] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            if let directive = try Self.directive(line, number: index + 1) {
                pending.append(directive)
            } else if let indent = Self.fenceIndent(line) {
                let opening = index
                var body: [String] = []
                index += 1
                while index < lines.count, Self.fenceIndent(lines[index]) == nil {
                    body.append(Self.outdented(lines[index], by: indent))
                    index += 1
                }
                blocks.append(
                    Block(
                        line: opening + 1, directives: pending, lines: body,
                        steps: Self.steps(body, firstLine: opening + 2)))
                pending = []
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                pending = []
            }
            index += 1
        }
        self.blocks = blocks
    }

    /// The Markdown files under `root` (hidden directories and `.build` left out), relative paths sorted.
    public static func markdownFiles(under root: URL) -> [String] {
        guard
            let walker = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])
        else { return [] }
        var paths: [String] = []
        let prefix = root.standardizedFileURL.path + "/"
        for case let url as URL in walker where url.pathExtension == "md" {
            let path = url.standardizedFileURL.path
            if path.hasPrefix(prefix) { paths.append(String(path.dropFirst(prefix.count))) }
        }
        return paths.sorted()
    }

    /// The indentation of a fence line (one starting, after spaces, with three backticks); nil for other lines.
    static func fenceIndent(_ line: String) -> Int? {
        let indent = line.prefix { $0 == " " }.count
        return line.dropFirst(indent).hasPrefix("```") ? indent : nil
    }

    /// The line without up to `indent` leading spaces.
    static func outdented(_ line: String, by indent: Int) -> String {
        String(line.dropFirst(min(indent, line.prefix { $0 == " " }.count)))
    }

    /// The directive a line holds, nil for a line that is no `readme-test` comment.
    static func directive(_ line: String, number: Int) throws -> Directive? {
        let prefix = "<!-- readme-test:"
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix(prefix), trimmed.hasSuffix("-->") else { return nil }
        let text = trimmed.dropFirst(prefix.count).dropLast(3).trimmingCharacters(in: .whitespaces)
        let words = text.split(separator: " ").map(String.init)
        switch words.first {
        case "fresh" where words.count == 1: return .fresh
        case "server" where words.count >= 2:
            let http = words.count > 2 && words[2].hasPrefix("http=") ? String(words[2].dropFirst(5)) : nil
            return .server(
                address: words[1], httpPort: http, arguments: Array(words.dropFirst(http == nil ? 2 : 3)))
        case "file" where words.count == 2: return .file(words[1])
        case "fixture" where words.count == 3: return .fixture(name: words[1], path: words[2])
        case "not" where text.hasPrefix("not run:"):
            return .notRun(text.dropFirst("not run:".count).trimmingCharacters(in: .whitespaces))
        default: throw ParseError(line: number, text: text)
        }
    }

    /// The commands of a block's lines and the lines shown after each.
    static func steps(_ body: [String], firstLine: Int) -> [Step] {
        var steps: [Step] = []
        var continued = false
        for (offset, line) in body.enumerated() {
            if continued {
                steps[steps.count - 1].command += "\n" + line
            } else if line.hasPrefix("$ ") {
                steps.append(Step(line: firstLine + offset, command: String(line.dropFirst(2)), expected: []))
            } else if !steps.isEmpty {
                steps[steps.count - 1].expected.append(line)
            }
            continued = (continued || line.hasPrefix("$ ")) && line.hasSuffix("\\")
        }
        for index in steps.indices {
            while steps[index].expected.last?.trimmingCharacters(in: .whitespaces).isEmpty == true {
                steps[index].expected.removeLast()
            }
        }
        return steps
    }
}
