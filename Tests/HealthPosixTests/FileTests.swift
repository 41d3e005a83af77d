import HealthPosix
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Files")
struct FileTests {
    /// A fresh temporary directory, removed when `body` returns.
    private func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "hkposix")
        defer { try? FileSystem.removeTree(directory) }
        try body(directory)
    }

    @Test("write, positioned write, read back, size, truncate, fsync and fdatasync")
    func roundTrip() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/data.log"
            let file = try File(path: path, options: [.create, .write])
            try file.write(Array("hello ".utf8))
            try file.write(Array("world".utf8))
            try file.syncData()
            #expect(try file.size() == 11)
            try file.write(Array("W".utf8), at: 6)
            try file.sync()
            #expect(try file.readAll() == Array("hello World".utf8))
            #expect(try file.read(count: 5, at: 6) == Array("World".utf8))
            #expect(try file.read(count: 100, at: 9) == Array("ld".utf8))
            #expect(try file.read(count: 10, at: 50).isEmpty)
            try file.truncate(to: 5)
            #expect(try FileSystem.size(of: path) == 5)
            #expect(throws: SystemError.self) { try file.readAll(maxBytes: 4) }
            file.close()
            file.close()
            #expect(try FileSystem.readFile(path) == Array("hello".utf8))
        }
    }

    @Test("append mode adds at the end even after the file was cut")
    func appendMode() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/append"
            try FileSystem.writeFileAtomically(path, Array("abcdef".utf8))
            let file = try File(path: path, options: [.write, .append])
            defer { file.close() }
            try file.write(Array("gh".utf8))
            try file.truncate(to: 3)
            try file.write(Array("XY".utf8))
            #expect(try file.readAll() == Array("abcXY".utf8))
        }
    }

    @Test("a large write through pwrite comes back whole")
    func largeWrite() throws {
        try withTemporaryDirectory { directory in
            let payload = largePattern(3 * 1024 * 1024 + 17)
            let file = try File(path: directory + "/big", options: [.create, .write])
            defer { file.close() }
            try file.write(payload, at: 0)
            #expect(sameBytes(try file.readAll(), payload))
        }
    }

    @Test("a file written piece by piece replaces the old one only when every piece was written")
    func atomicWriteInPieces() throws {
        struct Interrupted: Error {}
        try withTemporaryDirectory { directory in
            let path = directory + "/pieces"
            try FileSystem.writeFileAtomically(path, [7])
            #expect(throws: Interrupted.self) {
                try FileSystem.writeFileAtomically(path) { file in
                    try file.write([1, 2])
                    throw Interrupted()
                }
            }
            #expect(try FileSystem.readFile(path) == [7])
            try FileSystem.writeFileAtomically(path, permissions: 0o600) { file in
                try file.write([1, 2])
                try file.write([3])
            }
            #expect(try FileSystem.readFile(path) == [1, 2, 3])
            #expect(try FileSystem.contentsOfDirectory(directory) == ["pieces"], "no temporary file left behind")
        }
    }

    @Test("rename replaces atomically; unlink removes; the directory fsyncs")
    func renameAndUnlink() throws {
        try withTemporaryDirectory { directory in
            let old = directory + "/old"
            let new = directory + "/new"
            try FileSystem.writeFileAtomically(old, [1, 2, 3])
            try FileSystem.writeFileAtomically(new, [9])
            try FileSystem.rename(old, to: new)
            try FileSystem.syncDirectory(directory)
            #expect(try !FileSystem.exists(old))
            #expect(try FileSystem.readFile(new) == [1, 2, 3])
            try FileSystem.remove(new)
            #expect(try !FileSystem.exists(new))
            #expect(try FileSystem.contentsOfDirectory(directory).isEmpty, "no temporary file left behind")
            let missing = #expect(throws: SystemError.self) { try FileSystem.remove(new) }
            #expect(missing?.code == ENOENT)
        }
    }

    @Test("makeDirectories creates parents, accepts existing ones and refuses a file in the way")
    func makeDirectories() throws {
        try withTemporaryDirectory { directory in
            let deep = directory + "/a/b/c"
            try FileSystem.makeDirectories(deep)
            try FileSystem.makeDirectories(deep)
            #expect(try FileSystem.isDirectory(deep))
            try FileSystem.writeFileAtomically(directory + "/a/b/c/file", [0])
            #expect(try FileSystem.contentsOfDirectory(directory + "/a/b") == ["c"])
            let blocked = #expect(throws: SystemError.self) { try FileSystem.makeDirectories(deep + "/file/x") }
            #expect(blocked?.code == ENOTDIR)
            try FileSystem.removeTree(directory + "/a")
            #expect(try !FileSystem.exists(directory + "/a"))
        }
    }

    @Test("token files are written 0600 and permissions can be changed and read")
    func permissions() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/token"
            try FileSystem.writeFileAtomically(path, Array("secret".utf8), permissions: 0o600)
            #expect(try FileSystem.permissions(of: path) == 0o600)
            try FileSystem.setPermissions(0o640, of: path)
            #expect(try FileSystem.permissions(of: path) == 0o640)
            let file = try File(path: path)
            defer { file.close() }
            #expect(try file.permissions() == 0o640)
        }
    }

    @Test("exclusive create fails on an existing file; opening a missing file fails with ENOENT")
    func openErrors() throws {
        try withTemporaryDirectory { directory in
            let path = directory + "/once"
            try File(path: path, options: [.create, .exclusive, .write]).close()
            let exists = #expect(throws: SystemError.self) {
                try File(path: path, options: [.create, .exclusive, .write])
            }
            #expect(exists?.code == EEXIST)
            let missing = #expect(throws: SystemError.self) { try File(path: directory + "/nope") }
            #expect(missing?.code == ENOENT)
            #expect(missing?.call.contains("nope") == true)
        }
    }

    @Test("a directory lock excludes a second holder until released")
    func directoryLock() throws {
        try withTemporaryDirectory { directory in
            let first = try DirectoryLock(directory: directory)
            let second = #expect(throws: SystemError.self) { try DirectoryLock(directory: directory) }
            #expect(second?.code == EWOULDBLOCK)
            #expect(try FileSystem.permissions(of: first.path) == 0o600)
            first.release()
            let third = try DirectoryLock(directory: directory)
            third.release()
        }
    }

    @Test("deleting the lock file does not release the directory lock")
    func directoryLockSurvivesDeletedFile() throws {
        try withTemporaryDirectory { directory in
            let first = try DirectoryLock(directory: directory)
            defer { first.release() }
            try FileSystem.remove(first.path)
            let second = #expect(throws: SystemError.self) { try DirectoryLock(directory: directory) }
            #expect(second?.code == EWOULDBLOCK)
            #expect(second?.call.contains(directory) == true)
        }
    }

    @Test("leftovers of atomic writes (*.tmp-PID) are removed, nothing else")
    func atomicWriteLeftovers() throws {
        try withTemporaryDirectory { directory in
            for name in ["a.snap.tmp-123", "MANIFEST.tmp-9", "keep.tmp-", "keep.tmp-12x", "keep.snap", "tmp-5"] {
                try FileSystem.writeFileAtomically(directory + "/" + name, [1, 2, 3])
            }
            #expect(try FileSystem.removeAtomicWriteLeftovers(in: directory) == ["MANIFEST.tmp-9", "a.snap.tmp-123"])
            #expect(
                try FileSystem.contentsOfDirectory(directory) == ["keep.snap", "keep.tmp-", "keep.tmp-12x", "tmp-5"])
        }
    }

    @Test("status names permissions, owner and kind")
    func status() throws {
        try withTemporaryDirectory { directory in
            let info = try #require(try FileSystem.status(of: directory))
            #expect(info.isDirectory)
            #expect(info.permissions == 0o700)
            #expect(info.owner == FileSystem.effectiveUserID)
            #expect(try FileSystem.status(of: directory + "/missing") == nil)
        }
    }
}
