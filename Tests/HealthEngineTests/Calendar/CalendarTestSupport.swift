import Foundation
import HealthModel

/// Instants written as UTC text in tests, so expected values are read by a person, not computed by the code.
enum UTC {
    /// `"2024-03-10T07:00:00Z"` (optionally with `.SSS`) as a ``Timestamp``.
    static func at(_ text: String) -> Timestamp {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions =
            text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        guard let date = formatter.date(from: text) else { fatalError("bad test date \(text)") }
        return Timestamp((date.timeIntervalSince1970 * 1000).rounded()) * 1000
    }
}
