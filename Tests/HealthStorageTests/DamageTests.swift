import Foundation
import HealthEngine
import HealthModel
import HealthPosix
import TestSupport
import Testing

@testable import HealthStorage

/// The damage matrix: every kind of damage to the log, the snapshots and the manifest either is provably
/// unacknowledged (dropped with a log line) or stops start-up naming the file, the offset and `--repair`.
@Suite(.serialized)
struct DamageTests {
    /// A data directory whose log holds `records` acknowledged inserts of 10 samples each, one segment per
    /// element of `segments` (each element: that segment's records), stopped without a snapshot.
    func logged(segments counts: [Int] = [4]) throws -> String {
        let directory = try makeDataDirectory()
        var id: UInt64 = 0
        for count in counts {
            let (durable, _) = try openStore(directory)
            for _ in 0..<count {
                id += 1
                _ = try durable.insert(stepBatch(id: id, from: Int(id) * 100))
            }
            durable.close(snapshot: false)
        }
        return directory
    }

    /// The segments with records, in order (the empty segment a start creates is removed by the next start).
    func records(_ directory: String) throws -> [(path: String, scan: LogFraming.Scan)] {
        try segments(directory).map { ($0, LogFraming.scan(try FileSystem.readFile($0))) }
    }

    /// Expects start-up without `--repair` to refuse, naming `file`, each of `naming`, and `--repair`.
    func expectRefusal(_ directory: String, file: String, naming: [String] = []) {
        #expect {
            try openStore(directory)
        } throws: { error in
            guard let error = error as? HealthError, error.code == .storageUnavailable else { return false }
            let message = error.message
            let ok = message.contains(file) && message.contains("--repair") && naming.allSatisfy(message.contains)
            if !ok { Issue.record("refused with: \(message)") }
            return ok
        }
    }

    @Test(
        "a truncation in the middle of the last record, or at a record boundary, refuses: those records were acknowledged"
    )
    func truncation() throws {
        for cut in [25, 0] {
            let directory = try logged()
            defer { try? FileSystem.removeTree(directory) }
            let (path, scan) = try #require(try records(directory).last)
            let at = cut == 0 ? scan.records[2].offset : try Int(FileSystem.size(of: path)) - cut
            try truncateFile(path, to: at)
            expectRefusal(
                directory, file: path, naming: ["offset \(cut == 0 ? at : scan.records[3].offset)", "through 4"])
            // --repair keeps what is there and says what is lost; the next start is clean.
            let (repaired, lines) = try openStore(directory, repair: true)
            #expect(try steps(repaired.store).count == (cut == 0 ? 20 : 30))
            #expect(lines.all.contains { $0.contains("repair") && $0.contains("records through 4") })
            repaired.close(snapshot: false)
            let (again, _) = try openStore(directory)
            #expect(try steps(again.store).count == (cut == 0 ? 20 : 30))
            again.close(snapshot: false)
        }
    }

    @Test("zeroed tail pages over acknowledged records refuse")
    func zeroedTail() throws {
        let directory = try logged()
        defer { try? FileSystem.removeTree(directory) }
        let (path, scan) = try #require(try records(directory).last)
        var bytes = try FileSystem.readFile(path)
        let from = scan.records[2].offset + 5
        for i in from..<bytes.count { bytes[i] = 0 }
        try FileSystem.writeFileAtomically(path, bytes)
        expectRefusal(directory, file: path, naming: ["offset \(scan.records[2].offset)"])
    }

    @Test("zeros after the last record (a file extended, never written) are cut without --repair")
    func zerosAfterEnd() throws {
        let directory = try logged()
        defer { try? FileSystem.removeTree(directory) }
        let (path, _) = try #require(try records(directory).last)
        try appendBytes(path, Array(repeating: 0, count: 4096))
        let (reopened, lines) = try openStore(directory)
        defer { reopened.close(snapshot: false) }
        #expect(try steps(reopened.store).count == 40)
        #expect(reopened.recovery.tornBytes == 4096)
        #expect(lines.all.contains { $0.contains("cut off 4096 bytes") })
    }

    @Test("one flipped bit in a segment's magic refuses instead of dropping the segment")
    func flippedMagic() throws {
        let directory = try logged()
        defer { try? FileSystem.removeTree(directory) }
        let (path, _) = try #require(try records(directory).last)
        try flipBit(path, at: 3)
        expectRefusal(directory, file: path, naming: ["bad segment magic", "offset 0"])
        let (repaired, lines) = try openStore(directory, repair: true)
        #expect(repaired.store.info().totalSamples == 0)
        #expect(repaired.recovery.lostSamples == 40)
        #expect(lines.all.contains { $0.contains("could not keep 40 inserted samples") })
        #expect(try FileSystem.exists(path + ".damaged"))
        repaired.close(snapshot: false)
    }

    @Test("one flipped bit in a record's length refuses: a valid record follows; --repair keeps a .damaged copy")
    func flippedLength() throws {
        for bit: UInt8 in [0, 4, 20] {
            let directory = try logged()
            defer { try? FileSystem.removeTree(directory) }
            let (path, scan) = try #require(try records(directory).last)
            let second = scan.records[1].offset
            try flipBit(path, at: second + Int(bit / 8), bit: bit % 8)
            expectRefusal(directory, file: path, naming: ["offset \(second)"])
            let original = try FileSystem.readFile(path)
            let (repaired, lines) = try openStore(directory, repair: true)
            #expect(try steps(repaired.store).count == 10)
            #expect(repaired.recovery.lostSamples == 20, "the third and fourth records are readable")
            #expect(lines.all.contains { $0.contains("kept as \(path).damaged") })
            #expect(try FileSystem.readFile(path + ".damaged") == original)
            repaired.close(snapshot: false)
        }
    }

    @Test("a flipped bit in the last record refuses when the durable mark covers it")
    func flippedLastRecord() throws {
        let directory = try logged()
        defer { try? FileSystem.removeTree(directory) }
        let (path, scan) = try #require(try records(directory).last)
        try flipBit(path, at: scan.records[3].offset + 40)
        expectRefusal(directory, file: path, naming: ["through 4"])
    }

    @Test("a deleted segment refuses: the last one (durable mark), one in the middle and the first one (gaps)")
    func deletedSegment() throws {
        for which in ["last", "middle", "first"] {
            let directory = try logged(segments: [2, 2, 2])
            defer { try? FileSystem.removeTree(directory) }
            var all = try records(directory)
            #expect(all.count == 3)
            if which == "first" {
                // The first segment's records live on in a snapshot only when one was taken; without one, its
                // loss is a gap between the (empty) snapshot state and the second segment.
                try FileSystem.remove(all[0].path)
                all.removeFirst()
                expectRefusal(directory, file: all[0].path, naming: ["starts at sequence 3", "MANIFEST"])
            } else if which == "middle" {
                try FileSystem.remove(all[1].path)
                expectRefusal(directory, file: all[2].path, naming: ["a segment is missing", "offset 0"])
            } else {
                try FileSystem.remove(all[2].path)
                expectRefusal(directory, file: all[1].path, naming: ["through 6"])
            }
        }
    }

    @Test("a deleted first segment after a snapshot (a gap after the snapshot's sequence) refuses")
    func gapAfterSnapshot() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        var (durable, _) = try openStore(directory)
        _ = try durable.insert(stepBatch(id: 1))
        _ = try durable.snapshot()
        _ = try durable.insert(stepBatch(id: 2, from: 100))
        durable.close(snapshot: false)
        (durable, _) = try openStore(directory)
        _ = try durable.insert(stepBatch(id: 3, from: 200))
        durable.close(snapshot: false)
        let all = try records(directory)
        #expect(all.count == 2)
        try FileSystem.remove(all[0].path)
        expectRefusal(directory, file: all[1].path, naming: ["a segment is missing"])
    }

    @Test("a missing manifest refuses when snapshots exist; --repair sets them aside and starts from the log")
    func missingManifest() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        var (durable, _) = try openStore(directory)
        _ = try durable.insert(stepBatch(id: 1, rows: 30))
        durable.close()  // snapshot 1
        (durable, _) = try openStore(directory)
        _ = try durable.insert(stepBatch(id: 2, from: 100))
        durable.close(snapshot: false)
        let manifest = directory + "/snapshots/MANIFEST"
        try FileSystem.remove(manifest)
        expectRefusal(directory, file: manifest, naming: ["stepCount-1.snap"])
        let (repaired, lines) = try openStore(directory, repair: true)
        #expect(try steps(repaired.store).count == 10)
        #expect(lines.all.contains { $0.contains("stepCount-1.snap.damaged") })
        #expect(lines.all.contains { $0.contains("of what the repair kept") })
        #expect(try FileSystem.exists(directory + "/snapshots/stepCount-1.snap.damaged"))
        repaired.close(snapshot: false)
        // The repair's own snapshot: a kill now, and the next start needs no --repair.
        let (again, _) = try openStore(directory)
        #expect(try steps(again.store).count == 10)
        again.close(snapshot: false)
    }

    /// Writes snapshot generation `generation` of what `durable` holds as a snapshot does, files then manifest,
    /// and puts the manifest back as it was before: a snapshot killed after its files were renamed into place,
    /// before its manifest was.
    func unfinishedSnapshot(_ durable: DurableStore, _ directory: String, generation: UInt64, through: UInt64) throws {
        let manifest = directory + "/snapshots/MANIFEST"
        let before = try FileSystem.exists(manifest) ? try FileSystem.readFile(manifest) : nil
        _ = try SnapshotFiles(directory: directory + "/snapshots").write(
            generation: generation, images: { durable.store.image(of: $0) { through } },
            keptApart: { SnapshotPart.keptApart(of: durable.store) { through } })
        if let before {
            try FileSystem.writeFileAtomically(manifest, before)
        } else {
            try FileSystem.remove(manifest)
        }
    }

    @Test(
        "a first snapshot killed before its manifest (files, no MANIFEST, the log from 1) is set aside; start goes on")
    func unfinishedFirstSnapshot() throws {
        let directory = try logged()
        defer { try? FileSystem.removeTree(directory) }
        var (durable, _) = try openStore(directory)
        try unfinishedSnapshot(durable, directory, generation: 1, through: 4)
        durable.close(snapshot: false)
        let file = directory + "/snapshots/stepCount-1.snap"
        #expect(try FileSystem.exists(file))
        #expect(try !FileSystem.exists(directory + "/snapshots/MANIFEST"))
        let lines: LogLines
        (durable, lines) = try openStore(directory)
        #expect(try steps(durable.store).count == 40)
        #expect(try !FileSystem.exists(file))
        #expect(try FileSystem.exists(file + ".unfinished"))
        #expect(lines.all.contains { $0.contains("set aside \(file)") && $0.contains("did not finish") })
        // The next snapshot covers everything: the set-aside file goes.
        _ = try durable.snapshot()
        #expect(try !FileSystem.exists(file + ".unfinished"))
        durable.close(snapshot: false)
        (durable, _) = try openStore(directory)
        #expect(try steps(durable.store).count == 40)
        durable.close(snapshot: false)
    }

    @Test("a later snapshot whose files are in place but whose manifest update never happened is set aside")
    func unfinishedLaterSnapshot() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        var (durable, _) = try openStore(directory)
        _ = try durable.insert(stepBatch(id: 1))
        _ = try durable.insert(stepBatch(id: 2, from: 100))
        _ = try durable.snapshot()  // generation 1: records 1 and 2
        _ = try durable.insert(stepBatch(id: 3, from: 200))
        _ = try durable.insert(stepBatch(id: 4, from: 300))
        try unfinishedSnapshot(durable, directory, generation: 2, through: 4)
        durable.close(snapshot: false)
        let file = directory + "/snapshots/stepCount-2.snap"
        #expect(try FileSystem.exists(file))
        let lines: LogLines
        (durable, lines) = try openStore(directory)
        #expect(durable.recovery.manifest?.generation == 1)
        #expect(try steps(durable.store).count == 40)
        #expect(try FileSystem.exists(file + ".unfinished"))
        #expect(lines.all.contains { $0.contains("set aside \(file)") })
        durable.close()
        (durable, _) = try openStore(directory)
        #expect(try steps(durable.store).count == 40)
        #expect(try FileSystem.contentsOfDirectory(directory + "/snapshots").allSatisfy { !$0.contains("unfinished") })
        durable.close(snapshot: false)
    }

    @Test("a missing manifest without snapshot files refuses too when the log starts after sequence 1")
    func missingManifestEmptySnapshot() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        var (durable, _) = try openStore(directory)
        _ = try durable.insert(stepBatch(id: 1))
        #expect(try durable.delete(subject: "anna", type: "stepCount", filter: .all) == 10)
        durable.close()  // a snapshot with nothing in it; the log is dropped
        (durable, _) = try openStore(directory)
        _ = try durable.insert(stepBatch(id: 2, from: 100))
        durable.close(snapshot: false)
        try FileSystem.remove(directory + "/snapshots/MANIFEST")
        for name in try FileSystem.contentsOfDirectory(directory + "/snapshots") {
            try FileSystem.remove(directory + "/snapshots/" + name)
        }
        expectRefusal(directory, file: directory + "/snapshots/MANIFEST", naming: ["starts at sequence 3"])
    }

    @Test("a damaged manifest names the fix; --repair keeps it as MANIFEST.damaged")
    func damagedManifest() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let (durable, _) = try openStore(directory)
        _ = try durable.insert(stepBatch(id: 1))
        durable.close()
        let manifest = directory + "/snapshots/MANIFEST"
        try flipBit(manifest, at: 12)
        expectRefusal(directory, file: manifest)
        let (repaired, _) = try openStore(directory, repair: true)
        #expect(try FileSystem.exists(manifest + ".damaged"))
        #expect(try FileSystem.exists(directory + "/snapshots/stepCount-1.snap.damaged"))
        repaired.close(snapshot: false)
    }

    @Test("temporaries of a snapshot killed half-way (*.snap.tmp-PID) are removed at start")
    func snapshotTemporaries() throws {
        let directory = try logged()
        defer { try? FileSystem.removeTree(directory) }
        let leftover = directory + "/snapshots/stepCount-3.snap.tmp-4242"
        try FileSystem.writeFileAtomically(leftover, Array(repeating: 1, count: 1 << 16))
        let (reopened, lines) = try openStore(directory)
        defer { reopened.close(snapshot: false) }
        #expect(try !FileSystem.exists(leftover))
        #expect(lines.all.contains { $0.contains(leftover) })
    }

    @Test("a deleted or damaged durable mark over a log that ends cleanly: start-up goes on, says so, writes a new one")
    func durableMarkOverIntactLog() throws {
        for damage in ["remove", "flip", "empty"] {
            let directory = try logged()
            defer { try? FileSystem.removeTree(directory) }
            let mark = directory + "/wal/DURABLE"
            #expect(try DurableMark.decode(FileSystem.readFile(mark)) >= 4)
            switch damage {
            case "remove": try FileSystem.remove(mark)
            case "flip": try flipBit(mark, at: 9)
            default: try truncateFile(mark, to: 0)
            }
            let (reopened, lines) = try openStore(directory)
            #expect(try steps(reopened.store).count == 40)
            #expect(lines.all.contains { $0.contains("DURABLE: it is") && $0.contains("ends cleanly") })
            #expect(try DurableMark.decode(FileSystem.readFile(mark)) == 4)
            reopened.close(snapshot: false)
        }
    }

    @Test("a torn log end with the durable mark missing or damaged refuses, naming it; --repair cuts and keeps a copy")
    func tornEndWithoutMark() throws {
        for damage in ["remove", "flip"] {
            let directory = try logged()
            defer { try? FileSystem.removeTree(directory) }
            let (path, scan) = try #require(try records(directory).last)
            // The last record cut short (acknowledged, were the mark there to say so).
            let length = try Int(FileSystem.size(of: path))
            try truncateFile(path, to: length - 7)
            let mark = directory + "/wal/DURABLE"
            if damage == "remove" { try FileSystem.remove(mark) } else { try flipBit(mark, at: 9) }
            expectRefusal(directory, file: mark, naming: [path, damage == "remove" ? "missing" : "damaged"])
            let (repaired, lines) = try openStore(directory, repair: true)
            #expect(try steps(repaired.store).count == 30)
            #expect(lines.all.contains { $0.hasPrefix("repair: cut \(path) at offset \(scan.records[3].offset)") })
            #expect(try FileSystem.exists(path + ".damaged"))
            repaired.close(snapshot: false)
            let (again, _) = try openStore(directory)
            #expect(try steps(again.store).count == 30)
            again.close(snapshot: false)
        }
        // A torn segment header (a last segment cut inside its header) without a mark: the same.
        let directory = try logged(segments: [2, 2])
        defer { try? FileSystem.removeTree(directory) }
        let last = try #require(try records(directory).last).path
        try truncateFile(last, to: 9)
        try FileSystem.remove(directory + "/wal/DURABLE")
        expectRefusal(directory, file: directory + "/wal/DURABLE", naming: [last])
        let (repaired, _) = try openStore(directory, repair: true)
        #expect(try steps(repaired.store).count == 20)
        #expect(try FileSystem.exists(last + ".damaged"))
        repaired.close(snapshot: false)
    }

    @Test("a full disk at start: the store opens, serves reads and refuses changes retryably until space is freed")
    func fullDiskAtStart() throws {
        let directory = try logged()
        defer { try? FileSystem.removeTree(directory) }
        let opener = FailingOpener()
        opener.failCreate.store(true, ordering: .relaxed)
        let (durable, _) = try openStore(directory, opener: opener)
        #expect(try steps(durable.store).count == 40)
        #expect {
            try durable.insert(stepBatch(id: 99, from: 9000))
        } throws: { error in
            guard let error = error as? HealthError else { return false }
            return error.code == .storageUnavailable && error.isRetryable && error.message.contains("disk is full")
        }
        #expect(try steps(durable.store).count == 40)
        opener.failCreate.store(false, ordering: .relaxed)
        #expect(try durable.insert(stepBatch(id: 99, from: 9000)).inserted == 10)
        durable.close(snapshot: false)
        let (reopened, _) = try openStore(directory)
        defer { reopened.close(snapshot: false) }
        #expect(try steps(reopened.store).count == 50)
    }

    @Test("the scan tells a torn tail from damage in the middle, seeded random flips included")
    func scanResynchronises() throws {
        var bytes = LogFraming.segmentHeader(firstSequence: 1)
        for sequence in 1...6 {
            bytes += LogFraming.record(
                kind: 1, sequence: UInt64(sequence), payload: Array(repeating: UInt8(sequence), count: 50))
        }
        #expect(LogFraming.scan(bytes).damage == nil)
        var random = SplitMix64(seed: 42)
        for _ in 0..<200 {
            var damaged = bytes
            let offset = LogFraming.headerSize + Int(random.next() % UInt64(bytes.count - LogFraming.headerSize - 67))
            damaged[offset] ^= UInt8(1 << (random.next() % 8))
            // Damage before the last record always leaves a valid record after it.
            guard case .corrupt? = LogFraming.scan(damaged).damage else {
                Issue.record("a flip at \(offset) was taken for a torn tail")
                continue
            }
        }
        var torn = bytes
        torn.removeLast(10)
        #expect(LogFraming.scan(torn).damage == .tornTail(offset: bytes.count - 67))
    }
}
