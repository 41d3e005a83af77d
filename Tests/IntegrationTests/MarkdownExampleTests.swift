import Foundation
import Testing
import TestSupport

/// The examples of the package's Markdown files, run against real hkd servers: the rules for writing them are in
/// MarkdownExampleRunner.swift.
@Suite("Markdown examples")
struct MarkdownExampleTests {
    /// The files that may mark blocks `not run`, with how many; any other file may mark none. Raise only with a
    /// reason.
    static let notRunAllowed: [String: Int] = [
        // The TLS start and pinning, the cluster recipes, the W1 load.
        "README.md": 6,
        // A dated benchmark sitting: W1's 5.26 M samples with the release hkbench, timings of that day.
        "docs/benchmarks-history.md": 1,
    ]

    /// The files known to show examples, with the fewest commands each runs: examples the parser or the search
    /// for files lost fail here.
    static let commandsAtLeast: [String: Int] = ["README.md": 30, "docs/OUTPUT.md": 10]

    /// The package's Markdown files with examples (a command block or a directive), and any that does not parse.
    static let documents: [String] = MarkdownExamples.markdownFiles(under: TestFixtures.packageRoot).filter {
        guard
            let text = try? String(
                contentsOf: TestFixtures.packageRoot.appendingPathComponent($0), encoding: .utf8)
        else { return true }
        return (try? MarkdownExamples(markdown: text))?.hasExamples ?? true
    }

    @Test("every command a Markdown file shows prints what the file shows", arguments: documents)
    func document(_ path: String) async throws {
        let text = try String(contentsOf: TestFixtures.packageRoot.appendingPathComponent(path), encoding: .utf8)
        var runner = try MarkdownExampleRunner(file: path, markdown: text)
        let report = try await runner.run()
        for mismatch in report.mismatches {
            Issue.record(Comment(rawValue: mismatch.description))
        }
        print(
            (["\(path): \(report.commands) commands run, \(report.notRun.count) blocks not run"]
                + report.notRun.map { "  \(path):\($0.line): \($0.reason)" }).joined(separator: "\n"))
        #expect(report.commands >= Self.commandsAtLeast[path, default: 0], "\(path)'s commands were not found")
        #expect(
            report.notRun.count <= Self.notRunAllowed[path, default: 0],
            "\(path) marks more blocks `not run` than MarkdownExampleTests.notRunAllowed grants: can one run?")
    }

    @Test("the files known to show examples are found")
    func knownDocumentsFound() {
        let known = Set(Self.commandsAtLeast.keys).union(Self.notRunAllowed.keys)
        #expect(known.subtracting(Self.documents).isEmpty, "found only \(Self.documents)")
    }

    @Test("a command whose shown output is not what it prints fails, naming its line; masked fields do not")
    func changedExampleFails() async throws {
        let markdown = """
            Intro.

            <!-- readme-test: server 127.0.0.1:7420 -->
            <!-- readme-test: file rows.csv -->
            ```
            type,start,end,value,unit,source
            stepCount,2026-11-29T06:00:00-05:00,2026-11-29T06:10:00-05:00,1200,count,iPhone
            ```

            ```
            $ hkq insert rows.csv > /dev/null
            $ hkq units convert 98.6 degF degC
            38
            $ hkq server-info | head -2
            VERSION           hkd 0.1.0
            UPTIME            999d
            ```

            <!-- readme-test: not run: shows what cannot run -->
            ```
            $ false
            ```
            """
        var runner = try MarkdownExampleRunner(file: "EXAMPLE.md", markdown: markdown)
        let report = try await runner.run()
        #expect(report.commands == 3)
        #expect(report.notRun.map(\.line) == [20])
        #expect(report.mismatches.map(\.step.line) == [12], "\(report.mismatches)")
        let text = report.mismatches.first?.description ?? ""
        #expect(text.hasPrefix("EXAMPLE.md:12: `hkq units convert 98.6 degF degC`"), "\(text)")
        #expect(text.contains("- 38\n+ 37"), "\(text)")
    }

    @Test("the masks hide log timestamps, not the instants hkq prints")
    func masks() {
        let lines = ["2026-12-01T13:19:16.978Z hkd[info] listening", "2026-11-01T05:10:00Z,2026-11-01T05:20:00.5Z,400"]
        #expect(MarkdownExampleRunner.masked(lines) == ["<timestamp> hkd[info] listening", lines[1]])
    }

    @Test("a block indented in a list item runs, and an unknown directive names its line")
    func indentedBlocksAndUnknownDirectives() async throws {
        let markdown = """
            - A step:

              ```
              $ echo one \\
                two
              one two
              ```
            """
        var runner = try MarkdownExampleRunner(file: "LIST.md", markdown: markdown)
        let report = try await runner.run()
        #expect(report.commands == 1)
        #expect(report.mismatches.isEmpty, "\(report.mismatches)")
        let error = try #require(throws: MarkdownExamples.ParseError.self) {
            try MarkdownExamples(markdown: "Text.\n\n<!-- readme-test: serve 127.0.0.1:7420 -->\n```\n```")
        }
        #expect(error.line == 3)
    }

    @Test("the search for Markdown files leaves hidden directories out")
    func markdownFilesFound() throws {
        let root = try TestDirectory(prefix: "hk-markdown")
        for path in ["a.md", "docs/b.md", ".build/c.md", "docs/d.txt"] {
            let url = URL(fileURLWithPath: root.appending(path))
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try "text\n".write(to: url, atomically: true, encoding: .utf8)
        }
        #expect(MarkdownExamples.markdownFiles(under: URL(fileURLWithPath: root.path)) == ["a.md", "docs/b.md"])
    }
}
