import Foundation
import Synchronization

/// A fresh directory under the system's temporary directory, removed with everything in it when the last
/// reference to it goes away.
///
/// Share one between the servers of a test that restarts hkd on the same data
/// (``TestServer/restart(arguments:samePort:)`` does): the directory lives as long as any of them.
public final class TestDirectory: Sendable {
    /// The directory's absolute path.
    public let path: String

    /// The live directories by path, so a server started on another server's `dataDirectory` path keeps that
    /// directory alive too.
    private static let live = Mutex<[String: WeakDirectory]>([:])

    /// Creates `TMPDIR/<prefix>-<random>` (mode 0700).
    public init(prefix: String = "hkd-test") throws {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: template])
        }
        path = String(cString: made)
        Self.live.withLock { $0[path] = WeakDirectory(self) }
    }

    /// A fresh directory holding a copy of the data directory `fixture` in Tests/Fixtures, with the modes hkd
    /// requires (0700 directories, 0600 files).
    public convenience init(copyOf fixture: String) throws {
        try self.init(prefix: "hkd-old")
        let source = TestFixtures.packageRoot.appendingPathComponent("Tests/Fixtures/\(fixture)").path
        let files = FileManager.default
        for name in try files.contentsOfDirectory(atPath: source) where !name.hasPrefix("README") {
            try files.copyItem(atPath: source + "/" + name, toPath: appending(name))
        }
        let enumerator = files.enumerator(atPath: path)
        while let name = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let item = appending(name)
            guard files.fileExists(atPath: item, isDirectory: &isDirectory) else { continue }
            try files.setAttributes([.posixPermissions: isDirectory.boolValue ? 0o700 : 0o600], ofItemAtPath: item)
        }
    }

    /// `path` + "/" + `name`.
    public func appending(_ name: String) -> String { path + "/" + name }

    /// The live ``TestDirectory`` at `path`, if there is one.
    static func existing(at path: String) -> TestDirectory? {
        live.withLock { $0[path]?.directory }
    }

    deinit {
        let path = self.path
        Self.live.withLock { if $0[path]?.directory == nil { $0[path] = nil } }
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A weak reference, for the table of live directories.
private struct WeakDirectory: Sendable {
    weak var directory: TestDirectory?
    init(_ directory: TestDirectory) { self.directory = directory }
}
