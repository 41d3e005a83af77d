import Foundation
import Synchronization

/// The size of the terminal standard output is, in character cells.
public struct TerminalSize: Sendable, Equatable {
    /// Lines on the screen.
    public var rows: Int
    /// Characters on a line.
    public var columns: Int

    /// A size from its parts.
    public init(rows: Int, columns: Int) {
        self.rows = rows
        self.columns = columns
    }

    /// The size of the terminal `descriptor` is open on (TIOCGWINSZ); nil when it is no terminal. A terminal that
    /// reports no size counts as 24 × 80.
    public static func of(descriptor: Int32) -> TerminalSize? {
        guard isatty(descriptor) == 1 else { return nil }
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0, size.ws_col > 0 else {
            return TerminalSize(rows: 24, columns: 80)
        }
        return TerminalSize(rows: Int(size.ws_row), columns: Int(size.ws_col))
    }
}

/// Whether and through what program a listing on a terminal is paged, as git and psql do.
///
/// A command that prints a list of records (``CommandSpec/selectsFields``) on a terminal has its output held
/// until it is longer than the screen; then it goes through the pager: `$HKQ_PAGER`, else `$PAGER`, else
/// `less` (run with `LESS=FRX` unless `LESS` is set, as git does: quit at the end, keep colours, leave the text
/// on the screen). Output that is not a terminal is never paged; `--no-pager`, or `HKQ_PAGER` or `PAGER` set to
/// the empty string or `cat`, turns paging off.
public enum Pager {
    /// The pager when none is configured.
    public static let defaultCommand = "less"

    /// The shell command to page through, or nil for none: no terminal, `--no-pager`, or a pager that is empty
    /// or `cat`.
    public static func command(environment: [String: String], terminal: TerminalSize?, noPager: Bool) -> String? {
        guard terminal != nil, !noPager else { return nil }
        let command = (environment["HKQ_PAGER"] ?? environment["PAGER"] ?? defaultCommand).trimmingWhitespace
        return command.isEmpty || command == "cat" ? nil : command
    }
}

/// Something that takes the text a pager shows: a started pager program, or a fake in tests.
public protocol PagerProcess: Sendable {
    /// Writes bytes to the pager's standard input; false once the pager has gone (the user quit it).
    func write(bytes: UnsafeRawBufferPointer) -> Bool
    /// Closes the pager's input and waits until the user quits it.
    func finish()
}

/// Standard output for a listing on a terminal: holds the first screenful, writes it straight to `terminal` when
/// the listing ends within it, and otherwise starts the pager and sends everything through it.
///
/// Call ``finish()`` when the command ends, to flush a short listing or wait for the pager.
public final class PagingSink: TextSink {
    private struct State {
        var held: [UInt8] = []
        var lines = 0
        var pager: (any PagerProcess)?
        /// The pager could not be started or was quit: the rest goes straight to the terminal, or nowhere.
        var direct = false
        var quit = false
    }

    private let state = Mutex(State())
    private let terminal: any TextSink
    private let screenLines: Int
    private let start: @Sendable () -> (any PagerProcess)?

    /// A sink writing to `terminal`, paging output longer than `screenLines` lines through what `start`
    /// returns (nil: it could not start; the output then goes to `terminal`).
    public init(terminal: any TextSink, screenLines: Int, start: @escaping @Sendable () -> (any PagerProcess)?) {
        self.terminal = terminal
        self.screenLines = max(1, screenLines)
        self.start = start
    }

    /// Writes the text (see ``write(bytes:)``).
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Holds the bytes while the listing fits the screen; past it, sends the held bytes and these to the pager.
    public func write(bytes: UnsafeRawBufferPointer) {
        state.withLock { state in
            if state.quit { return }
            if state.direct { return terminal.write(bytes: bytes) }
            if let pager = state.pager {
                if !pager.write(bytes: bytes) { state.quit = true }
                return
            }
            state.held.append(contentsOf: bytes)
            state.lines += bytes.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            // A screen of `screenLines` rows shows `screenLines - 1` lines and the prompt after them.
            guard state.lines >= screenLines else { return }
            guard let pager = start() else {
                state.direct = true
                state.held.withUnsafeBytes { terminal.write(bytes: $0) }
                state.held = []
                return
            }
            state.pager = pager
            if !state.held.withUnsafeBytes({ pager.write(bytes: $0) }) { state.quit = true }
            state.held = []
        }
    }

    /// Whether the output went to a pager.
    public var paged: Bool { state.withLock { $0.pager != nil } }

    /// Ends the listing: writes a listing that fitted the screen to the terminal, or closes the pager's input and
    /// waits for the user to quit it.
    public func finish() {
        let pager = state.withLock { state -> (any PagerProcess)? in
            if state.pager == nil, !state.held.isEmpty {
                state.held.withUnsafeBytes { terminal.write(bytes: $0) }
                state.held = []
            }
            return state.pager
        }
        pager?.finish()
    }
}

/// A pager program run by `/bin/sh -c COMMAND` with its standard input a pipe from hkq and its output the
/// terminal hkq's standard output is.
public final class PagerChild: PagerProcess {
    private let process: Process
    private let input: FileHandle

    /// Starts `command` through the shell; nil when it cannot be started. Sets `LESS=FRX` unless `LESS` is set.
    public static func start(_ command: String) -> PagerChild? {
        // A pager quit early closes the pipe: the write then fails with EPIPE instead of killing hkq.
        signal(SIGPIPE, SIG_IGN)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        if environment["LESS"] == nil { environment["LESS"] = "FRX" }
        process.environment = environment
        let pipe = Pipe()
        process.standardInput = pipe
        do {
            try process.run()
        } catch {
            return nil
        }
        try? pipe.fileHandleForReading.close()
        return PagerChild(process: process, input: pipe.fileHandleForWriting)
    }

    private init(process: Process, input: FileHandle) {
        self.process = process
        self.input = input
    }

    /// Writes to the pager's input with write(2); false when the pager has gone.
    public func write(bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(input.fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Closes the pager's input and waits for it to exit.
    public func finish() {
        try? input.close()
        process.waitUntilExit()
    }
}
