import Foundation
import HealthCodec
import HealthModel
import HealthPosix
import Testing

@testable import HealthStorage

/// Backups at the storage layer: where one may be written (checked before anything is touched), what it carries
/// (a durable mark and `backup.json`), and that a backup that lost bytes never starts short without saying so.
@Suite(.serialized)
struct BackupStorageTests {
    /// A store with `batches` acknowledged inserts of 10 samples, and a scratch directory for backups beside it.
    func storeWithData(batches: Int = 4) throws -> (DurableStore, data: String, scratch: String) {
        let data = try makeDataDirectory()
        let scratch = try FileSystem.makeTemporaryDirectory(prefix: "hk-backups")
        let (durable, _) = try openStore(data)
        for id in 1...batches { _ = try durable.insert(stepBatch(id: UInt64(id), from: id * 100)) }
        return (durable, data, scratch)
    }

    /// Expects `backup(to:)` to refuse `path` with the non-retryable `invalidArgument`, its message holding `naming`.
    func expectRefused(_ durable: DurableStore, _ path: String, naming: String) {
        #expect {
            try durable.backup(to: path)
        } throws: { error in
            guard let error = error as? HealthError else { return false }
            let ok = error.code == .invalidArgument && !error.code.isRetryable && error.message.contains(naming)
            if !ok { Issue.record("refused \(path.debugDescription) with \(error.code): \(error.message)") }
            return ok
        }
    }

    @Test("backup paths that escape, create parents, point into the data directory or hold a NUL are refused first")
    func refusedPaths() throws {
        let (durable, data, scratch) = try storeWithData(batches: 1)
        defer {
            durable.close(snapshot: false)
            try? FileSystem.removeTree(data)
            try? FileSystem.removeTree(scratch)
        }
        let elsewhere = scratch + "/elsewhere"
        try FileSystem.makeDirectories(elsewhere)
        try FileSystem.makeDirectories(scratch + "/real")
        try FileManager.default.createSymbolicLink(atPath: scratch + "/link", withDestinationPath: elsewhere)
        try FileManager.default.createSymbolicLink(
            atPath: scratch + "/linked-parent", withDestinationPath: scratch + "/real")
        try FileSystem.makeDirectories(scratch + "/full")
        try FileSystem.writeFileAtomically(scratch + "/full/x", [1])
        try FileSystem.writeFileAtomically(scratch + "/file", [1])
        let snapshotsBefore = try FileSystem.contentsOfDirectory(data + "/snapshots")

        expectRefused(durable, scratch + "/nul\0/evil", naming: "NUL")
        expectRefused(durable, "relative/backup", naming: "absolute")
        expectRefused(durable, scratch + "/real/../escape", naming: "'..'")
        expectRefused(durable, scratch + "/missing/parent/backup", naming: "not an existing directory")
        expectRefused(durable, scratch + "/link", naming: "symbolic link")
        try FileManager.default.createSymbolicLink(atPath: scratch + "/data-link", withDestinationPath: data)
        expectRefused(durable, scratch + "/data-link/backup", naming: "inside hkd's data directory")
        expectRefused(durable, data + "/backup", naming: "inside hkd's data directory")
        expectRefused(durable, data, naming: "not empty")
        expectRefused(durable, scratch + "/full", naming: "not empty")
        expectRefused(durable, scratch + "/file", naming: "not a directory")
        expectRefused(durable, "/", naming: "root")

        // Nothing was created, and no snapshot was taken for a refused backup.
        #expect(try !FileSystem.exists(scratch + "/nul"))
        #expect(try !FileSystem.exists(scratch + "/missing"))
        #expect(try !FileSystem.exists(scratch + "/escape"))
        #expect(try FileSystem.contentsOfDirectory(elsewhere).isEmpty)
        #expect(try FileSystem.contentsOfDirectory(scratch + "/real").isEmpty)
        #expect(try !FileSystem.exists(data + "/backup"))
        #expect(try FileSystem.contentsOfDirectory(data + "/snapshots") == snapshotsBefore)
        // An absent directory in an existing one, and an empty existing one, are fine.
        _ = try durable.backup(to: scratch + "/real/")
        _ = try durable.backup(to: scratch + "//fresh")
        #expect(try FileSystem.exists(scratch + "/fresh/" + BackupManifest.fileName))
        // A parent reached through a symbolic link (systemd's StateDirectory of a DynamicUser service) is resolved.
        _ = try durable.backup(to: scratch + "/linked-parent/through-link")
        #expect(try FileSystem.exists(scratch + "/real/through-link/" + BackupManifest.fileName))
    }

    @Test("a backup carries its durable mark and backup.json; a start from it checks them, then drops backup.json")
    func backupCarriesMarkAndManifest() throws {
        let (durable, data, scratch) = try storeWithData()
        defer {
            try? FileSystem.removeTree(data)
            try? FileSystem.removeTree(scratch)
        }
        let backup = scratch + "/backup"
        let report = try durable.backup(to: backup, including: ["extra.txt"])
        // Changes after the backup are not in it.
        _ = try durable.insert(stepBatch(id: 99, from: 9_900))
        durable.close(snapshot: false)
        let manifest = try BackupManifest.decode(FileSystem.readFile(backup + "/" + BackupManifest.fileName))
        #expect(manifest.samples == 40)
        #expect(report.files == manifest.files.count + 1)
        let listed = Set(manifest.files.map(\.path))
        #expect(listed.contains("wal/DURABLE") && listed.contains("snapshots/MANIFEST"))
        #expect(listed.contains("snapshots/stepCount-1.snap"))
        #expect(!listed.contains("extra.txt"))  // not in the data directory: left out
        #expect(try DurableMark.decode(FileSystem.readFile(backup + "/wal/DURABLE")) == manifest.lastSequence)
        #expect(try BackupCheck.verify(backup) == manifest)

        let (restored, lines) = try openStore(backup)
        #expect(try steps(restored.store).count == 40)
        #expect(lines.all.contains { $0.contains("started from the backup") })
        #expect(try !FileSystem.exists(backup + "/" + BackupManifest.fileName))
        restored.close(snapshot: false)
    }

    @Test("a backup taken while inserts go on holds every record through its durable mark, whole")
    func backupUnderWrites() throws {
        let (durable, data, scratch) = try storeWithData()
        defer {
            try? FileSystem.removeTree(data)
            try? FileSystem.removeTree(scratch)
        }
        let writers = DispatchGroup()
        DispatchQueue.global().async(group: writers) {
            for id in 100..<200 { _ = try? durable.insert(stepBatch(id: UInt64(id), from: id * 100)) }
        }
        let backups = (0..<3).map { scratch + "/backup-\($0)" }
        for backup in backups { _ = try durable.backup(to: backup) }
        writers.wait()
        durable.close(snapshot: false)
        for backup in backups {
            let manifest = try #require(try BackupCheck.verify(backup))
            let (restored, _) = try openStore(backup)
            // Every record is an insert of 10 samples, numbered from 1: the backup holds exactly those through its
            // last sequence.
            #expect(try steps(restored.store).count == 10 * Int(manifest.lastSequence))
            #expect(try steps(restored.store).count >= Int(manifest.samples))
            restored.close(snapshot: false)
        }
    }

    @Test("a backup whose log lost its last records refuses to start, naming the file; --repair starts and says so")
    func truncatedBackupLog() throws {
        let (durable, data, scratch) = try storeWithData()
        defer {
            try? FileSystem.removeTree(data)
            try? FileSystem.removeTree(scratch)
        }
        let backup = scratch + "/backup"
        _ = try durable.backup(to: backup)
        durable.close(snapshot: false)
        // Three inserts after the snapshot in the backup's log, as a backup taken under writes holds them.
        let segment = try #require(try segments(backup).last)
        let first = LogFraming.scan(try FileSystem.readFile(segment)).firstSequence
        var offsets: [Int] = []
        for index in 0..<3 {
            offsets.append(try Int(FileSystem.size(of: segment)))
            let batch = stepBatch(id: 50 + UInt64(index), from: 5_000 + index * 100)
            try appendBytes(
                segment,
                LogFraming.record(
                    kind: LogRecordKind.insert.rawValue, sequence: first + UInt64(index),
                    payload: try LogChange.insert(batch).encodePayload()))
        }
        try relist(backup, lastSequence: first + 2)

        // Whole, it starts with all 70 samples.
        let whole = scratch + "/whole"
        try copyTree(backup, to: whole)
        let (started, _) = try openStore(whole)
        #expect(try steps(started.store).count == 70)
        started.close(snapshot: false)

        // Cut at a record boundary (the last record gone): backup.json names the file.
        try truncateFile(segment, to: offsets[2])
        let name = String(segment.split(separator: "/").last!)
        expectStartRefused(backup, naming: [BackupManifest.fileName, "wal/\(name) has", "--repair"])
        // Without backup.json (a backup of an earlier release), the durable mark still catches it.
        let manifestBytes = try FileSystem.readFile(backup + "/" + BackupManifest.fileName)
        try FileSystem.remove(backup + "/" + BackupManifest.fileName)
        expectStartRefused(backup, naming: ["DURABLE", "--repair"])
        try FileSystem.writeFileAtomically(backup + "/" + BackupManifest.fileName, manifestBytes)
        // --repair starts from what is there and reports what the backup lacks.
        let (repaired, lines) = try openStore(backup, repair: true)
        #expect(try steps(repaired.store).count == 60)
        #expect(lines.all.contains { $0.hasPrefix("repair: ") && $0.contains("damaged or incomplete") })
        #expect(lines.all.contains { $0.hasPrefix("repair: ") && $0.contains("through sequence \(first + 2)") })
        repaired.close(snapshot: false)
    }

    @Test("a backup without backup.json or a durable mark (an earlier release's) and an intact log still starts")
    func earlierReleaseBackup() throws {
        let (durable, data, scratch) = try storeWithData()
        defer {
            try? FileSystem.removeTree(data)
            try? FileSystem.removeTree(scratch)
        }
        let backup = scratch + "/backup"
        _ = try durable.backup(to: backup)
        durable.close(snapshot: false)
        try FileSystem.remove(backup + "/" + BackupManifest.fileName)
        try FileSystem.remove(backup + "/wal/DURABLE")
        #expect(try BackupCheck.verify(backup) == nil)
        let (started, lines) = try openStore(backup)
        #expect(try steps(started.store).count == 40)
        #expect(lines.all.contains { $0.contains("DURABLE: it is missing") })
        started.close(snapshot: false)
    }

    @Test("a damaged or missing backup file is named by the check before anything is copied or started")
    func damagedBackupFile() throws {
        let (durable, data, scratch) = try storeWithData()
        defer {
            try? FileSystem.removeTree(data)
            try? FileSystem.removeTree(scratch)
        }
        let backup = scratch + "/backup"
        _ = try durable.backup(to: backup)
        durable.close(snapshot: false)
        try flipBit(backup + "/snapshots/stepCount-1.snap", at: 40)
        try FileSystem.remove(backup + "/wal/DURABLE")
        let naming = ["snapshots/stepCount-1.snap does not match its checksum", "wal/DURABLE is missing"]
        #expect {
            try BackupCheck.verify(backup)
        } throws: { error in
            guard let error = error as? HealthError else { return false }
            return error.code == .storageUnavailable && naming.allSatisfy(error.message.contains)
        }
        expectStartRefused(backup, naming: naming + ["--repair"])
    }

    /// Lists the backup's files again as they are now (sizes and checksums), with the log through `lastSequence`.
    func relist(_ backup: String, lastSequence: UInt64) throws {
        var manifest = try BackupManifest.decode(FileSystem.readFile(backup + "/" + BackupManifest.fileName))
        manifest.lastSequence = lastSequence
        try FileSystem.writeFileAtomically(backup + "/wal/DURABLE", DurableMark.encode(lastSequence))
        manifest.files = try manifest.files.map { file in
            let bytes = try FileSystem.readFile(backup + "/" + file.path)
            return .init(path: file.path, size: UInt64(bytes.count), crc32: Zlib.crc32(bytes))
        }
        try FileSystem.writeFileAtomically(backup + "/" + BackupManifest.fileName, manifest.encode())
    }

    func expectStartRefused(_ directory: String, naming: [String]) {
        #expect {
            try openStore(directory)
        } throws: { error in
            guard let error = error as? HealthError, error.code == .storageUnavailable else { return false }
            let ok = naming.allSatisfy(error.message.contains)
            if !ok { Issue.record("refused with: \(error.message)") }
            return ok
        }
    }

    func copyTree(_ source: String, to target: String) throws {
        try FileSystem.makeDirectories(target, permissions: 0o700)
        for name in try FileSystem.contentsOfDirectory(source) {
            if try FileSystem.isDirectory(source + "/" + name) {
                try copyTree(source + "/" + name, to: target + "/" + name)
            } else {
                try FileSystem.copyFile(source + "/" + name, to: target + "/" + name)
            }
        }
    }
}
