import Foundation
import HealthClient
import HealthModel
import HealthPosix
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the real hkd makes of a snapshot that never finished and of backups that lost bytes, and where it lets a
/// backup be written: it starts when the log holds everything, refuses (naming the file) when something
/// acknowledged would be missing, and refuses a bad backup path before it touches the file system.
@Suite("crash-consistent snapshots and backups", .serialized)
struct CrashConsistencyTests {
    static let source = SourceInfo(name: "Crash", bundleIdentifier: "org.example.crash")
    static let types = ["stepCount", "heartRate", "activeEnergyBurned", "distanceWalkingRunning", "flightsClimbed"]

    /// `rows` samples of `type` for subject "crash", batch `id`.
    static func batch(_ id: UInt64, type: String = "stepCount", rows: Int = 10) throws -> SampleBatch {
        let unit = try QuantityType.named(type).canonicalUnit.symbol
        var batch = SampleBatch(batchID: id, subject: "crash", typeIdentifier: type, unit: unit)
        for row in 0..<rows {
            let start = Int64(Int(id) * 100_000 + row) * Micros.minute
            batch.append(start: start, end: start + Micros.minute, value: 1, source: source, uuid: UUID())
        }
        return batch
    }

    /// Inserts `batches` batches of `rows` rows for each of `types`; returns the samples per type.
    static func fill(_ hkd: TestServer, types: [String] = ["stepCount"], batches: Int, rows: Int = 10) async throws
        -> Int
    {
        let client = hkd.client(name: "filler")
        defer { client.close() }
        var id: UInt64 = 0
        for type in types {
            for _ in 0..<batches {
                id += 1
                _ = try await client.insert(try batch(id, type: type, rows: rows))
            }
        }
        return batches * rows
    }

    /// How many samples of `type` subject "crash" has.
    static func count(_ hkd: TestServer, _ type: String = "stepCount") async throws -> Int {
        let client = hkd.client(name: "reader")
        defer { client.close() }
        return try await client.samples(type, subject: "crash").count
    }

    static func files(_ directory: String) throws -> [String] { try FileSystem.contentsOfDirectory(directory) }

    @Test(
        "a first snapshot killed after its file was renamed into place, before MANIFEST: hkd starts and sets it aside")
    func unfinishedFirstSnapshot() async throws {
        // The state a kill leaves, made with hkd itself: the log of `crashed` holds everything (killed, never
        // snapshotted), and the snapshot file is the one a clean stop of a copy of it wrote.
        let crashed = try await TestServer()
        let expected = try await Self.fill(crashed, batches: 12)
        await crashed.kill()
        let copy = try FileSystem.makeTemporaryDirectory(prefix: "hkd-snapcopy")
        defer { try? FileSystem.removeTree(copy) }
        try FileSystem.setPermissions(0o700, of: copy)
        for folder in ["", "/wal", "/snapshots"] {
            try FileSystem.makeDirectories(copy + folder, permissions: 0o700)
            for name in try Self.files(crashed.dataDirectory + folder)
            where !(try FileSystem.isDirectory(crashed.dataDirectory + folder + "/" + name)) && name != "LOCK" {
                try FileSystem.copyFile(crashed.dataDirectory + folder + "/" + name, to: copy + folder + "/" + name)
            }
        }
        await (try await TestServer(dataDirectory: copy)).stop()  // its final snapshot: stepCount-1.snap
        let snapshot = try #require(try Self.files(copy + "/snapshots").first { $0.hasSuffix(".snap") })
        try FileSystem.copyFile(copy + "/snapshots/" + snapshot, to: crashed.dataDirectory + "/snapshots/" + snapshot)
        #expect(try !FileSystem.exists(crashed.dataDirectory + "/snapshots/MANIFEST"))

        let restarted = try await crashed.restart()
        #expect(restarted.logText.contains("set aside \(crashed.dataDirectory)/snapshots/\(snapshot)"))
        #expect(try await Self.count(restarted) == expected)
        // A clean stop snapshots, and the next start is an ordinary one.
        await restarted.stop()
        let again = try await restarted.restart()
        #expect(!again.logText.contains("set aside"))
        #expect(try await Self.count(again) == expected)
        #expect(try Self.files(again.dataDirectory + "/snapshots").allSatisfy { !$0.hasSuffix(".unfinished") })
        await again.stop()
    }

    @Test("kill -9 while hkd writes its first snapshot's files: the next start serves every acknowledged sample")
    func killDuringFirstSnapshot() async throws {
        // Each try: data in several types (a file each), then SIGTERM starts the final snapshot; as soon as a
        // snapshot file is in place while MANIFEST is not, hkd is stopped (SIGSTOP), the state checked, and killed.
        // A try whose snapshot finished before the stop landed proves nothing and is made again.
        var caught = 0
        for attempt in 1...6 where caught == 0 {
            let hkd = try await TestServer()
            let perType = try await Self.fill(hkd, types: Self.types, batches: 4, rows: 5_000)
            guard let pid = hkd.processIdentifier else { throw HealthError(.internalError, "hkd exited") }
            let snapshots = hkd.dataDirectory + "/snapshots"
            let manifest = snapshots + "/MANIFEST"
            Glibc.kill(pid, SIGTERM)
            try await waitUntil("a snapshot file in \(snapshots), or MANIFEST") {
                try FileSystem.exists(manifest) || Self.files(snapshots).contains { $0.hasSuffix(".snap") }
            }
            Glibc.kill(pid, SIGSTOP)
            let unfinished = try !FileSystem.exists(manifest)
            await hkd.kill()
            guard unfinished else { continue }
            caught = attempt
            let restarted = try await hkd.restart()
            #expect(restarted.logText.contains("set aside"))
            for type in Self.types { #expect(try await Self.count(restarted, type) == perType, "\(type)") }
            await restarted.stop()
        }
        print("kill -9 during the first snapshot: stopped between a snapshot file and MANIFEST on try \(caught)")
        #expect(caught > 0, "no try stopped hkd between a snapshot file and its MANIFEST")
    }

    @Test("backup paths: NUL, relative, '..', missing parent, a link, the data directory: invalidArgument")
    func refusedBackupPaths() async throws {
        let hkd = try await TestServer()
        _ = try await Self.fill(hkd, batches: 2)
        let scratch = try FileSystem.makeTemporaryDirectory(prefix: "hkd-backup-paths")
        defer { try? FileSystem.removeTree(scratch) }
        try FileSystem.makeDirectories(scratch + "/elsewhere")
        try FileManager.default.createSymbolicLink(
            atPath: scratch + "/link", withDestinationPath: scratch + "/elsewhere")
        try FileManager.default.createSymbolicLink(
            atPath: scratch + "/into-data", withDestinationPath: hkd.dataDirectory)
        let client = HealthClient(
            ClientConfiguration(
                host: "127.0.0.1", port: hkd.port, token: hkd.token, clientName: "backup-paths",
                requestTimeout: .seconds(30), retry: .none))
        defer { client.close() }
        let cases: [(path: String, naming: String)] = [
            (scratch + "/stray\0/x", "NUL"),
            ("backups/today", "absolute"),
            (scratch + "/elsewhere/../../escape", "'..'"),
            (scratch + "/missing/parents/backup", "not an existing directory"),
            (scratch + "/link", "symbolic link"),
            (scratch + "/into-data/backup", "inside hkd's data directory"),
            (hkd.dataDirectory + "/snapshots/backup", "inside hkd's data directory"),
        ]
        for (path, naming) in cases {
            do {
                _ = try await client.backup(to: path)
                Issue.record("backup into \(path.debugDescription) was taken")
            } catch {
                #expect(error.code == .invalidArgument, "\(path.debugDescription): \(error)")
                #expect(!error.isRetryable)
                #expect(error.message.contains(naming), "\(error.message)")
            }
        }
        #expect(try !FileSystem.exists(scratch + "/stray"))
        #expect(try !FileSystem.exists(scratch + "/missing"))
        #expect(try Self.files(scratch + "/elsewhere").isEmpty)
        #expect(try !FileSystem.exists(hkd.dataDirectory + "/snapshots/backup"))
        // A good path still works, also through a linked parent (resolved: written to the real directory).
        _ = try await client.backup(to: scratch + "/good")
        #expect(try FileSystem.exists(scratch + "/good/backup.json"))
        _ = try await client.backup(to: scratch + "/link/linked")
        #expect(try FileSystem.exists(scratch + "/elsewhere/linked/backup.json"))
        await hkd.stop()
    }

    @Test("a backup that lost bytes is refused by --restore-from and by a start on it, naming the file")
    func damagedBackupIsRefused() async throws {
        let hkd = try await TestServer()
        let expected = try await Self.fill(hkd, batches: 6)
        let scratch = try FileSystem.makeTemporaryDirectory(prefix: "hkd-backup-damage")
        defer { try? FileSystem.removeTree(scratch) }
        let backup = scratch + "/backup"
        let admin = hkd.client(name: "admin")
        _ = try await admin.backup(to: backup)
        admin.close()
        await hkd.stop()
        let snapshot = try #require(try Self.files(backup + "/snapshots").first { $0.hasSuffix(".snap") })
        let snapshotPath = backup + "/snapshots/" + snapshot
        let whole = try FileSystem.readFile(snapshotPath)
        try FileSystem.writeFileAtomically(snapshotPath, Array(whole.dropLast(100)), permissions: 0o600)

        let target = scratch + "/restored"
        await DataDirectoryTests.expectRefusal(
            scratch + "/restored", arguments: ["--restore-from", backup],
            naming: ["backup.json", "snapshots/\(snapshot) has \(whole.count - 100) bytes"])
        #expect(try !FileSystem.exists(target + "/snapshots"))
        await DataDirectoryTests.expectRefusal(backup, naming: ["backup.json", "snapshots/\(snapshot)", "--repair"])

        // Whole again, it restores and says it checked it.
        try FileSystem.writeFileAtomically(snapshotPath, whole, permissions: 0o600)
        let restored = try await TestServer(dataDirectory: target, arguments: ["--restore-from", backup])
        #expect(restored.logText.contains("checked the backup \(backup)"))
        #expect(restored.logText.contains("started from the backup"))
        let reader = restored.client(token: hkd.token)
        #expect(try await reader.samples("stepCount", subject: "crash").count == expected)
        reader.close()
        await restored.stop()
    }
}
