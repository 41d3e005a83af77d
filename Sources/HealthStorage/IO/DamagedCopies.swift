import HealthPosix

/// What `--repair` sets aside instead of deleting: `NAME.damaged` (then `NAME.damaged-2`, …) next to the
/// original, so nothing it gives up is gone for good.
enum DamagedCopies {
    /// Renames `path` to a free `.damaged` name and returns that name's path.
    static func setAside(_ path: String) throws -> String {
        let target = try freeName(for: path)
        try FileSystem.rename(path, to: target)
        return target
    }

    /// Writes `bytes` (the file's content before a cut) to a free `.damaged` name and returns its path.
    static func keepCopy(of path: String, _ bytes: [UInt8]) throws -> String {
        let target = try freeName(for: path)
        try FileSystem.writeFileAtomically(target, bytes, permissions: 0o600)
        return target
    }

    private static func freeName(for path: String) throws -> String {
        var candidate = path + ".damaged"
        var number = 2
        while try FileSystem.exists(candidate) {
            candidate = path + ".damaged-\(number)"
            number += 1
        }
        return candidate
    }
}
