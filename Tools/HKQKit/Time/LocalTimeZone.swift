import Foundation

/// This machine's time zone, found the way Foundation finds it, without its set-up cost on the common path.
enum LocalTimeZone {
    /// With `TZ` unset, the zone `/etc/localtime` links to (`/usr/share/zoneinfo/Europe/Berlin`), by identifier;
    /// otherwise `TimeZone.current`. Foundation's `current` first asks `ProcessInfo` for `TZ`, which sets itself
    /// up and copies the whole environment: a twentieth of a short command's start.
    static var current: TimeZone {
        guard getenv("TZ") == nil, let target = linkTarget("/etc/localtime"),
            let identifier = zoneIdentifier(linkTarget: target), let zone = TimeZone(identifier: identifier)
        else { return TimeZone.current }
        return zone
    }

    /// `Europe/Berlin` for `/usr/share/zoneinfo/Europe/Berlin` or `../usr/share/zoneinfo/Europe/Berlin`: what
    /// follows the last `zoneinfo` directory; nil when the path holds none or nothing follows it.
    static func zoneIdentifier(linkTarget path: String) -> String? {
        let parts = path.split(separator: "/")
        guard let directory = parts.lastIndex(of: "zoneinfo"), directory + 1 < parts.count else { return nil }
        return parts[(directory + 1)...].joined(separator: "/")
    }

    /// Where the symbolic link at `path` points; nil when it is not one.
    private static func linkTarget(_ path: String) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 4096) { buffer in
            let count = readlink(path, buffer.baseAddress!, buffer.count)
            guard count > 0, count < buffer.count else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: count), as: UTF8.self)
        }
    }
}
