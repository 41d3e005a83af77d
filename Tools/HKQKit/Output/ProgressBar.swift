import HealthImport

/// The one-line progress bar of `hkq import` on a terminal: bytes read of the total, records per second and the
/// time left, redrawn in place with a carriage return at most once per ``minimumInterval``.
///
/// Threading: not thread-safe; call it from the task that reads the file.
final class ProgressBar {
    /// Shortest time between two redraws, in seconds.
    static let minimumInterval = 0.1
    /// Width of the bar between its brackets.
    static let barWidth = 24

    private let sink: any TextSink
    private let clock: () -> Double
    private let started: Double
    private var lastDraw: Double?
    private var lastWidth = 0

    /// A bar written to `sink`; `clock` gives seconds on any monotonic scale (tests pass their own).
    init(sink: any TextSink, clock: @escaping () -> Double) {
        self.sink = sink
        self.clock = clock
        started = clock()
    }

    /// Redraws the bar for `progress` unless it was drawn less than ``minimumInterval`` ago.
    func update(_ progress: ImportProgress) {
        let now = clock()
        if let lastDraw, now - lastDraw < ProgressBar.minimumInterval { return }
        lastDraw = now
        let line = ProgressBar.line(progress, elapsed: now - started)
        // Pad over a longer previous line so no characters of it stay behind.
        let padding = String(repeating: " ", count: max(0, lastWidth - line.count))
        lastWidth = line.count
        sink.write("\r" + line + padding)
    }

    /// Erases the bar, leaving the cursor at the start of the empty line, when one was drawn.
    func clear() {
        guard lastDraw != nil else { return }
        sink.write("\r" + String(repeating: " ", count: lastWidth) + "\r")
        lastDraw = nil
        lastWidth = 0
    }

    /// `[#########...............]  38%  3.5 MiB / 9.3 MiB  180,512 records/s  0:07 left` for `progress` after
    /// `elapsed` seconds; the time left is extrapolated from the bytes read so far.
    static func line(_ progress: ImportProgress, elapsed: Double) -> String {
        let fraction = progress.fraction
        let filled = min(barWidth, Int((fraction * Double(barWidth)).rounded(.down)))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: barWidth - filled)
        let percent = Int((fraction * 100).rounded(.down))
        let read = HumanFormat.bytes(UInt64(max(0, progress.bytesRead)))
        let total = HumanFormat.bytes(UInt64(max(0, progress.totalBytes)))
        let rate = elapsed > 0 ? Int((Double(progress.recordsSeen) / elapsed).rounded()) : 0
        var text = "[\(bar)] \(pad(percent, to: 3))%  \(read) / \(total)  \(grouped(rate)) records/s"
        if fraction > 0, elapsed > 0 {
            text += "  \(clock(seconds: elapsed * (1 - fraction) / fraction)) left"
        }
        return text
    }

    /// `m:ss`, or `h:mm:ss` from an hour on.
    static func clock(seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        let (hours, minutes, secs) = (whole / 3600, whole % 3600 / 60, whole % 60)
        let twoDigits = { (value: Int) in value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(twoDigits(minutes)):\(twoDigits(secs))" : "\(minutes):\(twoDigits(secs))"
    }

    /// `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value.magnitude))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return value < 0 ? "-" + text : text
    }

    private static func pad(_ value: Int, to width: Int) -> String {
        let text = String(value)
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
