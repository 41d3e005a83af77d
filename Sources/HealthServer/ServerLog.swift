import Foundation

/// One-line log records on stderr: `2026-11-29T12:00:00.123Z hkd[level] message`. Thread-safe.
public enum ServerLog {
    public enum Level: String, Sendable { case info, warning, error }

    /// Writes one record; never throws, never blocks on anything but stderr.
    public static func write(_ level: Level, _ message: String) {
        let line = "\(Date.now.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))) hkd[\(level.rawValue)] \(message)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    public static func info(_ message: String) { write(.info, message) }
    public static func warning(_ message: String) { write(.warning, message) }
    public static func error(_ message: String) { write(.error, message) }
}
