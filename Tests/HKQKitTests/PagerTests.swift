import Foundation
import Synchronization
import TestSupport
import Testing

@testable import HKQKit

/// A pager that keeps what it is sent; `accepts` bytes before it acts as if the user quit it.
private final class FakePager: PagerProcess {
    private let received = Mutex<[UInt8]>([])
    private let finished = Atomic<Bool>(false)
    let accepts: Int

    init(accepts: Int = .max) { self.accepts = accepts }

    func write(bytes: UnsafeRawBufferPointer) -> Bool {
        received.withLock { received in
            received.append(contentsOf: bytes.prefix(max(0, accepts - received.count)))
            return received.count < accepts
        }
    }

    func finish() { finished.store(true, ordering: .relaxed) }

    var text: String { received.withLock { String(decoding: $0, as: UTF8.self) } }
    var isFinished: Bool { finished.load(ordering: .relaxed) }
}

@Suite struct PagerTests {
    static let terminal = TerminalSize(rows: 5, columns: 80)

    @Test func thePagerIsChosenOnlyForATerminalAndCanBeTurnedOff() {
        #expect(Pager.command(environment: [:], terminal: Self.terminal, noPager: false) == "less")
        #expect(Pager.command(environment: [:], terminal: nil, noPager: false) == nil)
        #expect(Pager.command(environment: [:], terminal: Self.terminal, noPager: true) == nil)
        #expect(Pager.command(environment: ["PAGER": "more"], terminal: Self.terminal, noPager: false) == "more")
        let both = ["PAGER": "more", "HKQ_PAGER": "most -s"]
        #expect(Pager.command(environment: both, terminal: Self.terminal, noPager: false) == "most -s")
        for off in ["", "cat", " cat "] {
            #expect(Pager.command(environment: ["HKQ_PAGER": off], terminal: Self.terminal, noPager: false) == nil)
            #expect(Pager.command(environment: ["PAGER": off], terminal: Self.terminal, noPager: false) == nil)
        }
        #expect(
            Pager.command(environment: ["HKQ_PAGER": "", "PAGER": "more"], terminal: Self.terminal, noPager: false)
                == nil)
    }

    @Test func aListingThatFitsTheScreenGoesStraightToTheTerminal() {
        let screen = CapturedText()
        let started = Atomic<Int>(0)
        let sink = PagingSink(terminal: screen, screenLines: 5) {
            started.add(1, ordering: .relaxed)
            return FakePager()
        }
        sink.write("one\ntwo\n")
        sink.write("three\nfour\n")
        #expect(screen.text == "", "held until the listing ends or passes a screen")
        sink.finish()
        #expect(screen.text == "one\ntwo\nthree\nfour\n")
        #expect(started.load(ordering: .relaxed) == 0)
        #expect(!sink.paged)
    }

    @Test func aListingLongerThanTheScreenGoesWholeThroughThePager() {
        let screen = CapturedText()
        let pager = FakePager()
        let sink = PagingSink(terminal: screen, screenLines: 5) { pager }
        let lines = (1...12).map { "row \($0)\n" }
        for line in lines { sink.write(line) }
        sink.finish()
        #expect(screen.text == "")
        #expect(pager.text == lines.joined())
        #expect(pager.isFinished)
        #expect(sink.paged)
    }

    @Test func aPagerThatCannotStartLeavesTheListingOnTheTerminal() {
        let screen = CapturedText()
        let sink = PagingSink(terminal: screen, screenLines: 3) { nil }
        let text = (1...10).map { "row \($0)\n" }.joined()
        sink.write(text)
        sink.write("last\n")
        sink.finish()
        #expect(screen.text == text + "last\n")
    }

    @Test func nothingIsWrittenAfterTheUserQuitsThePager() {
        let screen = CapturedText()
        let pager = FakePager(accepts: 8)
        let sink = PagingSink(terminal: screen, screenLines: 2) { pager }
        sink.write("aaaa\nbbbb\ncccc\n")
        sink.write("dddd\n")
        sink.finish()
        #expect(pager.text == "aaaa\nbbb")
        #expect(screen.text == "")
    }

    @Test func onlyListingsOnATerminalArePagedInProcess() async {
        // `types` prints a list of records longer than five lines; `units convert` prints one line. Without a
        // terminal, or with paging off, the listing is written as it is.
        let (console, out, _) = Console.capturing()
        let piped = await HKQ.standard.run(arguments: ["types"], environment: [:], console: console)
        #expect(piped == 0)
        #expect(out.text.split(separator: "\n").count > 5)
        let program = HKQ.standard
        let onTerminal = Console(out: CapturedText(), err: CapturedText(), terminal: Self.terminal)
        #expect(
            program.pagingSink(for: TypesCommand(), globals: Self.globals(), environment: [:], console: onTerminal)
                != nil)
        #expect(
            program.pagingSink(for: TypesCommand(), globals: Self.globals(), environment: [:], console: console) == nil)
        var noPager = Self.globals()
        noPager.noPager = true
        #expect(program.pagingSink(for: TypesCommand(), globals: noPager, environment: [:], console: onTerminal) == nil)
        #expect(
            program.pagingSink(
                for: TypesCommand(), globals: Self.globals(), environment: ["PAGER": "cat"], console: onTerminal)
                == nil)
        #expect(
            program.pagingSink(
                for: UnitsConvertCommand(), globals: Self.globals(), environment: [:], console: onTerminal)
                == nil)
    }

    static func globals() -> GlobalOptions {
        GlobalOptions(server: .defaultAddress, subject: "me", token: nil, format: .table)
    }

    /// The built hkq on a pseudo-terminal of `rows` lines (util-linux `script`), with `environment`.
    static func onTerminal(rows: Int, _ arguments: String, environment: [String: String]) async throws -> String {
        let hkq = try BinaryTests.hkqURL().path
        let command = "stty rows \(rows) cols 80; exec \(hkq) \(arguments)"
        let outcome = try await runChild(
            "/usr/bin/script", ["-qec", command, "/dev/null"],
            environment: ["PATH": "/usr/bin:/bin", "TERM": "dumb"].merging(environment) { $1 })
        #expect(outcome.status == 0, "\(outcome.printed)")
        return outcome.output.replacingOccurrences(of: "\r\n", with: "\n")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func theBinaryPagesALongListingOnAPseudoTerminalOnly() async throws {
        let pager = ["HKQ_PAGER": "sed s/^/paged:/"]
        let paged = try await Self.onTerminal(rows: 6, "types", environment: pager)
        let lines = paged.split(separator: "\n")
        #expect(lines.count > 6)
        #expect(lines.allSatisfy { $0.hasPrefix("paged:") }, "\(paged.prefix(300))")

        let short = try await Self.onTerminal(rows: 6, "units convert 1 mi m", environment: pager)
        #expect(short == "1609.344\n")
        let tall = try await Self.onTerminal(rows: 500, "types", environment: pager)
        #expect(!tall.contains("paged:"), "a listing that fits the screen is not paged")
        let off = try await Self.onTerminal(rows: 6, "types --no-pager", environment: pager)
        #expect(!off.contains("paged:") && off.hasPrefix("IDENTIFIER"))

        let (status, piped, _) = try await BinaryTests.run(["types"], environment: pager)
        #expect(status == 0)
        #expect(!piped.contains("paged:") && piped.hasPrefix("IDENTIFIER"))
    }
}
