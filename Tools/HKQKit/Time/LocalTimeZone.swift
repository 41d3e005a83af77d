import Foundation

/// This machine's time zone, found the way Foundation finds it, without its set-up cost on the common path.
enum LocalTimeZone {
    /// With `TZ` unset, the zone `/etc/localtime` links to (`/usr/share/zoneinfo/Europe/Berlin`), by identifier;
    /// otherwise `TimeZone.current`. Foundation's `current` first asks `ProcessInfo` for `TZ`, which sets itself
    /// up and copies the whole environment.
    static var current: TimeZone {
        guard getenv("TZ") == nil, let target = linkTarget("/etc/localtime"),
            let identifier = zoneIdentifier(linkTarget: target), let zone = named(identifier)
        else { return TimeZone.current }
        return zone
    }

    /// The zone named `identifier` (an IANA id), or nil for a name Foundation does not know. One of UTC's names
    /// (``utcNames``: most servers' and containers' local zone) is Foundation's fixed zero-offset zone, `GMT`,
    /// the same offsets at every instant: Foundation would resolve the name through ICU, whose set-up is a large
    /// part of a short command's time.
    static func named(_ identifier: String) -> TimeZone? {
        utcNames.contains(identifier) ? TimeZone.gmt : TimeZone(identifier: identifier)
    }

    /// The zone database's names of UTC (`Etc/UTC` and its links in `backward`), whose offset is always zero.
    static let utcNames = [
        "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "UTC", "UCT", "Universal", "Zulu", "Etc/GMT", "Etc/GMT+0",
        "Etc/GMT-0", "Etc/GMT0", "Etc/Greenwich", "GMT", "GMT+0", "GMT-0", "GMT0", "Greenwich",
    ]

    /// `Europe/Berlin` for `/usr/share/zoneinfo/Europe/Berlin` or `../usr/share/zoneinfo/Europe/Berlin`: what
    /// follows the last `zoneinfo` directory; nil when the path holds none or nothing follows it.
    static func zoneIdentifier(linkTarget path: String) -> String? {
        // Bytes compared in a loop: splitting and joining path components instantiates generic types at their
        // first use, which costs this one call more than the rest of it.
        let bytes = Array(path.utf8)
        let directory = Array("zoneinfo/".utf8)
        var start: Int?
        for index in 0...max(0, bytes.count - directory.count) where index == 0 || bytes[index - 1] == UInt8(ascii: "/")
        {
            var matches = index + directory.count <= bytes.count
            var offset = 0
            while matches, offset < directory.count {
                matches = bytes[index + offset] == directory[offset]
                offset += 1
            }
            if matches { start = index + directory.count }
        }
        guard let start, start < bytes.count else { return nil }
        return String(decoding: bytes[start...], as: UTF8.self)
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
