import Foundation
import HealthModel

/// Random-access reads of the file being imported, through Foundation's `FileHandle`, or of an export held in
/// memory.
///
/// The only place HealthImport touches the file system. Not thread-safe (reads seek the shared handle).
final class ExportFile {
    /// The path as given.
    let path: String
    /// The file name quoted in messages, e.g. `"export.zip"`.
    let displayName: String
    /// Size in bytes.
    let size: Int64
    /// Where the bytes come from.
    private enum Backing {
        case handle(FileHandle)
        case memory(Data)
    }
    private let backing: Backing

    /// Opens `path` for reading; throws ``ErrorCode/invalidArgument`` when it is missing, a directory or unreadable.
    init(path: String) throws {
        self.path = path
        displayName = "\"\((path as NSString).lastPathComponent)\""
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw HealthError(.invalidArgument, "\(displayName): no such file")
        }
        guard !isDirectory.boolValue else {
            throw HealthError(.invalidArgument, "\(displayName) is a directory, not an Apple Health export")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw HealthError(.invalidArgument, "\(displayName): cannot open the file for reading")
        }
        backing = .handle(handle)
        do {
            size = Int64(try handle.seekToEnd())
        } catch {
            throw HealthError(.invalidArgument, "\(displayName): cannot read the file (\(error.localizedDescription))")
        }
    }

    /// The export in `bytes`, named `name` in messages.
    init(bytes: Data, name: String) {
        path = name
        displayName = "\"\(name)\""
        size = Int64(bytes.count)
        backing = .memory(bytes)
    }

    deinit {
        if case .handle(let handle) = backing { try? handle.close() }
    }

    /// Up to `count` bytes at `offset`: fewer only where the file ends.
    func read(at offset: Int64, count: Int) throws -> Data {
        guard offset >= 0, offset < size, count > 0 else { return Data() }
        let handle: FileHandle
        switch backing {
        case .memory(let bytes):
            let start = bytes.startIndex + Int(offset)
            return bytes[start..<start + Int(min(Int64(count), size - offset))]
        case .handle(let fileHandle): handle = fileHandle
        }
        do {
            try handle.seek(toOffset: UInt64(offset))
            var data = try handle.read(upToCount: count) ?? Data()
            // read(upToCount:) may return short; keep reading until the count or the end of the file.
            while data.count < count, let more = try handle.read(upToCount: count - data.count), !more.isEmpty {
                data.append(more)
            }
            return data
        } catch {
            throw HealthError(.invalidArgument, "\(displayName): read failed (\(error.localizedDescription))")
        }
    }

    /// Exactly `count` bytes at `offset`; throws ``ErrorCode/malformedPayload`` naming `what` when the file ends
    /// first.
    func read(exactly count: Int, at offset: Int64, what: String) throws -> [UInt8] {
        let data = try read(at: offset, count: count)
        guard data.count == count else {
            throw HealthError(.malformedPayload, "\(displayName) is truncated or damaged (\(what) is cut off)")
        }
        return [UInt8](data)
    }
}
