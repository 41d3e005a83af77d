import Foundation
import HealthModel
import Synchronization

/// hkd's log on stderr, one record per line. Thread-safe.
///
/// Text: `2026-11-29T12:00:00.123Z hkd[warning] message`. JSON (`--log-format json`):
/// `{"time":"2026-11-29T12:00:00.123Z","level":"warning","message":"…"}`. Times are RFC 3339 in UTC (`Z`).
/// Records below the configured level (`--log-level`) are dropped. Tokens never appear in messages.
public enum ServerLog {
    /// Severity, least severe first.
    public enum Level: String, Sendable, CaseIterable, Comparable {
        case debug, info, warning, error

        private var rank: Int { Self.allCases.firstIndex(of: self)! }
        public static func < (a: Level, b: Level) -> Bool { a.rank < b.rank }
    }

    /// How records are written.
    public enum Format: String, Sendable, CaseIterable {
        case text, json
    }

    private static let settings = Mutex<(format: Format, level: Level)>((.text, .info))

    /// Sets the format and the least severe level written (at start-up, from the configuration).
    public static func configure(format: Format, level: Level) {
        settings.withLock { $0 = (format, level) }
    }

    /// Writes one record unless its level is below the configured one; never throws.
    public static func write(_ level: Level, _ message: String) {
        let (format, least) = settings.withLock { $0 }
        guard level >= least else { return }
        FileHandle.standardError.write(Data(line(level, message, format: format, at: .now).utf8))
    }

    /// One record as written, with its newline.
    static func line(_ level: Level, _ message: String, format: Format, at date: Date) -> String {
        let time = date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        switch format {
        case .text:
            return "\(time) hkd[\(level.rawValue)] \(message)\n"
        case .json:
            return "{\"time\":\"\(time)\",\"level\":\"\(level.rawValue)\",\"message\":\(JSONString.quoted(message))}\n"
        }
    }

    public static func debug(_ message: String) { write(.debug, message) }
    public static func info(_ message: String) { write(.info, message) }
    public static func warning(_ message: String) { write(.warning, message) }
    public static func error(_ message: String) { write(.error, message) }
}
