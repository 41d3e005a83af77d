import HealthPosix

/// Whether a data directory already holds samples' history, for the checks that must not treat it as new.
public enum StoredData {
    /// A file showing that `directory` holds data (a snapshot manifest or file, a log segment with a record),
    /// `nil` when it holds none.
    public static func evidence(in directory: String) throws -> String? {
        let snapshots = directory + "/snapshots"
        if try FileSystem.isDirectory(snapshots) {
            for name in try FileSystem.contentsOfDirectory(snapshots)
            where name == "MANIFEST" || name.hasSuffix(".snap") {
                return snapshots + "/" + name
            }
        }
        let wal = directory + "/wal"
        if try FileSystem.isDirectory(wal) {
            for name in try FileSystem.contentsOfDirectory(wal) where name.hasSuffix(".log") {
                let path = wal + "/" + name
                if try FileSystem.size(of: path) > Int64(LogFraming.headerSize) { return path }
            }
        }
        return nil
    }
}
