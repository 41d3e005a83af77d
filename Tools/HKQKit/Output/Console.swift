import Foundation
import HealthWire
import Synchronization

/// A destination for text: standard output, standard error, or a buffer in tests.
///
/// Implementations must be safe to call from any thread; each call writes its text whole.
public protocol TextSink: Sendable {
    /// Writes `text` as is (no newline is added).
    func write(_ text: String)
    /// Writes UTF-8 `bytes` as they are (a large listing written in chunks, without a string of it all).
    func write(bytes: UnsafeRawBufferPointer)
}

extension TextSink {
    /// Writes the bytes as a string (a sink that holds text).
    public func write(bytes: UnsafeRawBufferPointer) { write(String(decoding: bytes, as: UTF8.self)) }
}

/// One of the process's standard streams, written unbuffered through `FileHandle`.
public struct StandardStream: TextSink {
    /// File descriptor 1.
    public static let output = StandardStream(descriptor: 1)
    /// File descriptor 2.
    public static let error = StandardStream(descriptor: 2)

    let descriptor: Int32

    /// Writes the text; a write error (closed pipe) is ignored, as `print` does. Written from the string's own
    /// bytes with write(2): wrapping them in `Data` first went through generic code that looks up conformances
    /// at run time, on every command's first line.
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Writes the bytes with write(2); a write error (closed pipe) is ignored.
    public func write(bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}

/// Collects everything written to it; what tests give ``Console`` to read the output back.
public final class CapturedText: TextSink {
    private let buffer = Mutex("")

    /// An empty buffer.
    public init() {}

    /// Appends `text` to the buffer.
    public func write(_ text: String) { buffer.withLock { $0 += text } }

    /// Everything written so far.
    public var text: String { buffer.withLock { $0 } }
}

/// The two output streams of hkq. Commands print through it so tests can capture what they write.
public struct Console: Sendable {
    /// Where results go (standard output).
    public let out: any TextSink
    /// Where errors and diagnostics go (standard error).
    public let err: any TextSink
    /// The size of the terminal standard output is; nil when it is no terminal (a pipe, a file, a test's buffer).
    public let terminal: TerminalSize?
    /// Told the token of the next page when a listing's limit left rows out, besides the hint on standard error
    /// (the HTTP API makes it a `Link` header); nil for hkq itself.
    public let nextPage: (@Sendable (PageToken) -> Void)?

    /// A console over the given sinks; `terminal` is the size of the terminal `out` is, if it is one.
    public init(
        out: any TextSink, err: any TextSink, terminal: TerminalSize? = nil,
        nextPage: (@Sendable (PageToken) -> Void)? = nil
    ) {
        self.out = out
        self.err = err
        self.terminal = terminal
        self.nextPage = nextPage
    }

    /// The process's standard output and standard error.
    public static let standard = Console(
        out: StandardStream.output, err: StandardStream.error, terminal: TerminalSize.of(descriptor: 1))

    /// A console writing into two fresh buffers, returned with it: `let (console, out, err) = Console.capturing()`.
    public static func capturing() -> (console: Console, out: CapturedText, err: CapturedText) {
        let out = CapturedText()
        let err = CapturedText()
        return (Console(out: out, err: err), out, err)
    }

    /// Writes `line` and a newline to standard output.
    public func print(_ line: String) { out.write(line + "\n") }

    /// Writes `line` and a newline to standard error.
    public func printError(_ line: String) { err.write(line + "\n") }

    /// Says that a listing's limit left rows out: the hint `hint: more samples follow; continue with --after
    /// TOKEN` on standard error (docs/OUTPUT.md, *samples*), and the token to ``nextPage``.
    public func printNextPage(_ token: PageToken) {
        printError("hint: more samples follow; continue with --after \(token.text)")
        nextPage?(token)
    }

    /// Writes `text` to standard output, adding a final newline unless it is empty or already ends with one.
    public func printBlock(_ text: String) {
        if text.isEmpty { return }
        out.write(text.hasSuffix("\n") ? text : text + "\n")
    }
}
