import Foundation
import HealthClient
import HealthModel
import HealthPosix
import TestSupport
import Testing

/// The data directory as the real hkd guards it: one server at a time, no tampering by other users, no silent
/// new admin, and a full disk that still lets it start.
@Suite("hkd data directory", .serialized)
struct DataDirectoryTests {
    static let source = SourceInfo(name: "Disk", bundleIdentifier: "org.example.disk")

    static func batch(_ id: UInt64, rows: Int = 10) -> SampleBatch {
        var batch = SampleBatch(batchID: id, subject: "disk", typeIdentifier: "stepCount", unit: "count")
        for row in 0..<rows {
            let start = Int64(Int(id) * 1000 + row) * Micros.minute
            batch.append(start: start, end: start + Micros.minute, value: 1, source: source, uuid: UUID())
        }
        return batch
    }

    /// A client that does not retry, so that a refusal is seen as it is.
    static func client(_ hkd: TestServer, token: String? = nil) -> HealthClient {
        HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: hkd.port, token: token ?? hkd.token, clientName: "disk-test",
                requestTimeout: .seconds(10), retry: .none))
    }

    /// Expects hkd to refuse to start on `directory`, its log containing every one of `naming`.
    static func expectRefusal(_ directory: String, arguments: [String] = [], naming: [String]) async {
        do {
            let hkd = try await TestServer(dataDirectory: directory, arguments: arguments)
            await hkd.stop()
            Issue.record("hkd started on \(directory)")
        } catch {
            let text = "\(error)"
            #expect(naming.allSatisfy(text.contains), "\(text)")
        }
    }

    @Test("a second hkd refuses a directory in use, also after its LOCK file was deleted")
    func lockSurvivesDeletedFile() async throws {
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "hkd-lock")
        defer { try? FileSystem.removeTree(directory) }
        let first = try await TestServer(dataDirectory: directory)
        try FileSystem.remove(directory + "/LOCK")
        await Self.expectRefusal(directory, naming: ["locked by another server"])
        #expect(first.isRunning)
        #expect(await first.stop() == 0)
    }

    @Test("a data directory writable by others is refused with the chmod that fixes it; write leftovers are removed")
    func worldWritableDirectory() async throws {
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "hkd-modes")
        defer { try? FileSystem.removeTree(directory) }
        try FileSystem.setPermissions(0o777, of: directory)
        await Self.expectRefusal(
            directory, naming: [directory, "writable by group or others", "chmod go-w \(directory)"])
        try FileSystem.setPermissions(0o700, of: directory)
        // A write of identities.json killed before its rename left a temporary: removed at start.
        let leftover = directory + "/identities.json.tmp-4242"
        try FileSystem.writeFileAtomically(leftover, Array("{}".utf8), permissions: 0o600)
        let hkd = try await TestServer(dataDirectory: directory)
        #expect(try !FileSystem.exists(leftover))
        await hkd.stop()
    }

    @Test("an identities.json another user owns or may write is refused with the chown or chmod fix")
    func foreignIdentityFile() async throws {
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "hkd-owner")
        defer { try? FileSystem.removeTree(directory) }
        await (try await TestServer(dataDirectory: directory)).stop()
        let identities = directory + "/identities.json"
        try FileSystem.setPermissions(0o620, of: identities)
        await Self.expectRefusal(directory, naming: [identities, "chmod go-w"])
        try FileSystem.setPermissions(0o600, of: identities)
        if FileSystem.effectiveUserID == 0 {
            // Only root can give a file away; as another user the check's other half is all that can be tested.
            #expect(chown(identities, 65534, 65534) == 0)
            await Self.expectRefusal(directory, naming: [identities, "belongs to user 65534", "chown 0 \(identities)"])
        }
    }

    @Test("a deleted identities.json with data refuses; --reset-admin mints a new admin that sees the data")
    func deletedIdentities() async throws {
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "hkd-identities")
        defer { try? FileSystem.removeTree(directory) }
        var hkd = try await TestServer(dataDirectory: directory)
        let client = Self.client(hkd)
        _ = try await client.insert(Self.batch(1))
        client.close()
        await hkd.stop()
        let oldToken = hkd.token
        try FileSystem.remove(directory + "/identities.json")
        await Self.expectRefusal(directory, naming: ["identities.json is missing", "--reset-admin"])
        #expect(try String(contentsOfFile: directory + "/admin.token", encoding: .utf8).hasPrefix(oldToken))
        hkd = try await TestServer(dataDirectory: directory, arguments: ["--reset-admin"])
        #expect(hkd.token != oldToken && !hkd.token.isEmpty)
        let admin = Self.client(hkd)
        #expect(try await admin.samples("stepCount", subject: "disk").count == 10)
        admin.close()
        await hkd.stop()
    }

    @Test(
        "a full disk: snapshot leftovers are removed at start; with the disk still full hkd serves reads and refuses writes retryably"
    )
    func fullDisk() async throws {
        let mountPoint = try FileSystem.makeTemporaryDirectory(prefix: "hkd-tmpfs")
        defer { try? FileSystem.removeTree(mountPoint) }
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", mountPoint]) else {
            // Without the right to mount, DamageTests' full disk at start covers the same path through a seam.
            return
        }
        defer { _ = Self.run("/bin/umount", [mountPoint]) }
        let directory = mountPoint + "/data"
        var hkd = try await TestServer(dataDirectory: directory, arguments: ["--snapshot-interval", "0"])
        var client = Self.client(hkd)
        _ = try await client.insert(Self.batch(1))
        client.close()
        await hkd.kill()

        // A snapshot killed half-way left its temporary file, and it filled the disk.
        let leftover = directory + "/snapshots/stepCount-7.snap.tmp-4242"
        try Self.fill(leftover)
        hkd = try await TestServer(dataDirectory: directory, arguments: ["--snapshot-interval", "0"])
        #expect(try !FileSystem.exists(leftover))
        client = Self.client(hkd)
        #expect(try await client.insert(Self.batch(2)).inserted == 10)
        client.close()
        await hkd.kill()

        // Now the disk is full for a reason hkd cannot remove.
        let filler = mountPoint + "/filler"
        try Self.fill(filler)
        hkd = try await TestServer(dataDirectory: directory, arguments: ["--snapshot-interval", "0"])
        client = Self.client(hkd)
        #expect(try await client.samples("stepCount", subject: "disk").count == 20)
        do {
            _ = try await client.insert(Self.batch(3))
            Issue.record("an insert succeeded on a full disk")
        } catch {
            #expect(error.code == .storageUnavailable && error.isRetryable, "\(error)")
        }
        try FileSystem.remove(filler)
        #expect(try await client.insert(Self.batch(3)).inserted == 10)
        #expect(try await client.samples("stepCount", subject: "disk").count == 30)
        client.close()
        #expect(await hkd.stop() == 0)
        #expect(hkd.logText.contains("full"))
    }

    /// Writes to `path` until the file system is full.
    static func fill(_ path: String) throws {
        let file = try File(path: path, options: [.create, .write, .truncate], permissions: 0o600)
        defer { file.close() }
        let chunk = [UInt8](repeating: 0x42, count: 64 << 10)
        do {
            while true { try file.write(chunk) }
        } catch  where error.code == ENOSPC {
            // Full: fill the last partial chunk too.
            while (try? file.write([0x42])) != nil {}
        }
    }

    /// Runs a program; whether it exited with 0.
    static func run(_ program: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
