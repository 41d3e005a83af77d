/// Durations and byte counts written for people (tables); JSON and CSV print plain numbers instead.
public enum HumanFormat {
    /// `2h 05m`, `1d 03h 00m 10s`, `45s`, `250ms`, `0s`: the largest unit unpadded, smaller ones two digits,
    /// trailing zero units left out; whole seconds once the duration reaches one second.
    public static func duration(micros: Int64) -> String {
        let sign = micros < 0 ? "-" : ""
        let magnitude = micros.magnitude
        if magnitude == 0 { return "0s" }
        if magnitude < 1_000_000 {
            let millis = (magnitude + 500) / 1000
            return millis == 0 ? sign + "\(magnitude)µs" : sign + "\(millis)ms"
        }
        var seconds = (magnitude + 500_000) / 1_000_000
        let days = seconds / 86_400
        seconds %= 86_400
        let parts: [(UInt64, String)] = [
            (days, "d"), (seconds / 3600, "h"), (seconds % 3600 / 60, "m"), (seconds % 60, "s"),
        ]
        guard let first = parts.firstIndex(where: { $0.0 != 0 }),
            let last = parts.lastIndex(where: { $0.0 != 0 })
        else { return "0s" }
        let words = parts[first...last].enumerated().map { position, part in
            let number = String(part.0)
            return (position == 0 || number.count >= 2 ? number : "0" + number) + part.1
        }
        return sign + words.joined(separator: " ")
    }

    /// `1 sample`, `0 samples`, `2 new samples`: `count` and a noun that agrees with it, the plural being the
    /// singular with an `s` unless given (`count(2, "activity summary", plural: "activity summaries")`).
    public static func count(_ count: some BinaryInteger, _ singular: String, plural: String? = nil) -> String {
        "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
    }

    /// `512 B`, `1.5 KiB`, `42.1 MiB`, `1.2 GiB`: binary units, one decimal.
    public static func bytes(_ count: UInt64) -> String {
        if count < 1024 { return "\(count) B" }
        let units = ["KiB", "MiB", "GiB", "TiB", "PiB"]
        var value = Double(count) / 1024
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = (value * 10).rounded()
        let text = tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int(tenths / 10)) : String(tenths / 10)
        return "\(text) \(units[unit])"
    }
}
