import Foundation
import HealthModel

/// Finds the route files an export's `<FileReference path="/workout-routes/…gpx">` names: entries of the zip
/// (`apple_health_export/workout-routes/…`, the directory read once), or files beside a plain export.xml (an
/// unpacked export). Bytes are capped at ``GPXReader/maxBytes`` before anything is read. Not thread-safe.
final class RouteFileLocator {
    private let file: ExportFile
    /// The zip's entries under a `workout-routes/` folder, by name; `nil` until first needed or for a plain file.
    private var entries: [String: ZipEntry]?
    private let isZip: Bool

    init(file: ExportFile) {
        self.file = file
        isZip = ((try? file.read(at: 0, count: 4)).map { ZipDirectory.looksLikeZip([UInt8]($0)) }) ?? false
    }

    /// The bytes of the route file `path` as the export writes it; throws a ``Rejection`` when there is none.
    func bytes(of path: String) throws -> [UInt8] {
        let relative = path.split(separator: "/").filter { !$0.isEmpty && $0 != ".." }.joined(separator: "/")
        guard relative.hasSuffix(".gpx"), !relative.isEmpty else {
            throw Rejection("route file is not a .gpx file", "route file \"\(path.prefix(80))\" is not a .gpx file")
        }
        return isZip ? try zipped(relative, path) : try beside(relative, path)
    }

    private func zipped(_ relative: String, _ path: String) throws -> [UInt8] {
        if entries == nil {
            var found: [String: ZipEntry] = [:]
            try ZipDirectory.forEachEntry(in: file) { entry in
                if entry.name.contains("workout-routes/"), !entry.name.hasPrefix("__MACOSX/") {
                    found[entry.name] = entry
                }
                return true
            }
            entries = found
        }
        guard
            let entry = entries?["apple_health_export/" + relative]
                ?? entries?.values.sorted(by: { $0.name < $1.name }).first(where: { $0.name.hasSuffix("/" + relative) })
        else { throw missing(path) }
        guard entry.uncompressedSize <= Int64(GPXReader.maxBytes) else { throw tooLarge(path, entry.uncompressedSize) }
        let source = try ZipEntryByteSource(file: file, entry: entry)
        var bytes: [UInt8] = []
        while try source.read(into: &bytes) {}
        return bytes
    }

    private func beside(_ relative: String, _ path: String) throws -> [UInt8] {
        let directory = (file.path as NSString).deletingLastPathComponent
        let full = (directory.isEmpty ? "." : directory) + "/" + relative
        guard FileManager.default.fileExists(atPath: full), let route = try? ExportFile(path: full) else {
            throw missing(path)
        }
        guard route.size <= Int64(GPXReader.maxBytes) else { throw tooLarge(path, route.size) }
        return [UInt8](try route.read(at: 0, count: Int(route.size)))
    }

    private func missing(_ path: String) -> Rejection {
        Rejection("route file is missing", "route file \"\(path.prefix(80))\" is not in the export")
    }

    private func tooLarge(_ path: String, _ size: Int64) -> Rejection {
        Rejection(
            "route file is too large",
            "route file \"\(path.prefix(80))\" holds \(size) bytes; at most \(GPXReader.maxBytes)")
    }
}
