import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthPosix
import HealthStorage
import Synchronization

/// A fresh data directory, removed by the caller with `FileSystem.removeTree`.
func makeDataDirectory() throws -> String { try FileSystem.makeTemporaryDirectory(prefix: "hk-storage") }

let watch = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch")

/// A batch of `rows` step samples starting at minute `from`, explicit random UUIDs.
func stepBatch(
    id: UInt64, subject: String = "anna", from: Int = 0, rows: Int = 10, derivedUUIDs: Bool = false
) -> SampleBatch {
    var batch = SampleBatch(batchID: id, subject: subject, typeIdentifier: "stepCount", unit: "count")
    for i in from..<(from + rows) {
        let start = Int64(i) * Micros.minute
        batch.append(
            start: start, end: start + Micros.minute, value: Double(i % 7), source: watch,
            uuid: derivedUUIDs ? nil : UUID())
    }
    return batch
}

// As an export names them: the iPhone by hardware model, Garmin Connect, and the Health app, which writes the
// person's manual entries (HEALTHKIT.md §8).
let exportPhone = SourceInfo(name: "Anna’s iPhone", device: "iPhone14,2")
let connect = SourceInfo(name: "Connect", device: "fenix 6")
let health = SourceInfo(name: "Health", version: "17.1")

/// A batch of one-minute samples of 10 steps, `(minute, source, manual)` rows; manual ones carry
/// `HKWasUserEntered` 1, as an export gives it.
func manualBatch(_ id: UInt64, _ subject: String, _ rows: [(minute: Int, source: SourceInfo, manual: Bool)])
    -> SampleBatch
{
    var batch = SampleBatch(batchID: id, subject: subject, typeIdentifier: "stepCount", unit: "count")
    for row in rows {
        let start = Int64(row.minute) * Micros.minute
        batch.append(
            start: start, end: start + Micros.minute, value: 10, source: row.source,
            metadata: row.manual ? ["HKWasUserEntered": .number(1)] : [:])
    }
    return batch
}

/// `file`, a snapshot file this version wrote, as version 7 wrote the same image (another magic, the same body).
func version7(_ file: [UInt8]) -> [UInt8] {
    var old = Array("HKSNAP07".utf8) + file[8..<(file.count - 4)]
    withUnsafeBytes(of: Zlib.crc32(old).littleEndian) { old.append(contentsOf: $0) }
    return old
}

/// Opens a durable store on `directory` with snapshots only when asked.
func openStore(_ directory: String, repair: Bool = false, opener: any LogFileOpener = PosixLogFileOpener()) throws
    -> (DurableStore, LogLines)
{
    let lines = LogLines()
    let store = try DurableStore(
        StorageConfiguration(
            directory: directory, fsync: .always, repair: repair, snapshotIntervalSeconds: 0, snapshotLogBytes: 0,
            opener: opener),
        log: { lines.append($0) })
    return (store, lines)
}

/// Log lines a store wrote.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// The stored step samples of `subject`, as (start, value, uuid) in start order.
func steps(_ store: HealthStore, subject: String = "anna") throws -> SampleQueryResult {
    try store.samples(subject: subject, type: "stepCount")
}

/// The paths of the log segments in `directory`.
func segments(_ directory: String) throws -> [String] {
    try FileSystem.contentsOfDirectory(directory + "/wal").filter { $0.hasSuffix(".log") }.map {
        directory + "/wal/" + $0
    }
}

/// Flips one byte of a file.
func flipByte(_ path: String, at offset: Int) throws {
    var bytes = try FileSystem.readFile(path)
    bytes[offset] ^= 0x5A
    try FileSystem.writeFileAtomically(path, bytes)
}

/// Flips one bit of a file.
func flipBit(_ path: String, at offset: Int, bit: UInt8 = 0) throws {
    var bytes = try FileSystem.readFile(path)
    bytes[offset] ^= 1 << bit
    try FileSystem.writeFileAtomically(path, bytes)
}

/// Appends `bytes` to a file (a write a crash cut short).
func appendBytes(_ path: String, _ bytes: [UInt8]) throws {
    let file = try File(path: path, options: [.write, .append])
    defer { file.close() }
    try file.write(bytes)
}

/// Cuts a file to `length` bytes.
func truncateFile(_ path: String, to length: Int) throws {
    let file = try File(path: path, options: [.write])
    defer { file.close() }
    try file.truncate(to: Int64(length))
}

/// A segment opener whose files fail to write once `failing` is set (a full disk).
final class FailingOpener: LogFileOpener {
    let failing = Atomic<Bool>(false)
    let failSync = Atomic<Bool>(false)
    /// Creating a segment fails with ENOSPC (a disk full at start-up).
    let failCreate = Atomic<Bool>(false)

    func create(_ path: String) throws -> any LogFile {
        if failCreate.load(ordering: .relaxed) { throw SystemError(errno: ENOSPC, call: "open(\(path))") }
        return FailingFile(try PosixLogFileOpener().create(path), owner: self)
    }
}

final class FailingFile: LogFile {
    let inner: any LogFile
    let owner: FailingOpener
    init(_ inner: any LogFile, owner: FailingOpener) {
        self.inner = inner
        self.owner = owner
    }
    func append(_ bytes: [UInt8]) throws {
        if owner.failing.load(ordering: .relaxed) {
            // Half the record reaches the file before the disk fills up.
            try inner.append(Array(bytes.prefix(bytes.count / 2)))
            throw SystemError(errno: ENOSPC, call: "write(segment)")
        }
        try inner.append(bytes)
    }
    func syncData() throws {
        if owner.failSync.load(ordering: .relaxed) { throw SystemError(errno: EIO, call: "fdatasync(segment)") }
        try inner.syncData()
    }
    func truncate(to length: Int64) throws { try inner.truncate(to: length) }
    func close() { inner.close() }
}
