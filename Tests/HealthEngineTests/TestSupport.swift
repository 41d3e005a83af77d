import Foundation
import HealthModel
import Synchronization

@testable import HealthEngine

/// Seconds as a timestamp, to keep hand-computed examples readable.
func sec(_ seconds: Double) -> Timestamp { Timestamp(seconds * 1_000_000) }

let watch = SourceInfo(name: "Anna's Apple Watch", bundleIdentifier: "com.apple.health.watch", device: "Watch6,2")
let phone = SourceInfo(name: "Anna's iPhone", bundleIdentifier: "com.apple.health.phone", device: "iPhone14,2")
let fitApp = SourceInfo(name: "FitApp", bundleIdentifier: "com.example.fit")
let runApp = SourceInfo(name: "RunApp", bundleIdentifier: "org.example.run")
let manualApp = SourceInfo(name: "Logbook", bundleIdentifier: "net.example.logbook")

/// One row of a test batch.
struct Row {
    var start: Timestamp
    var end: Timestamp
    var value: Double
    var source: SourceInfo = phone
    var userEntered = false

    init(_ start: Timestamp, _ end: Timestamp, _ value: Double, _ source: SourceInfo = phone, userEntered: Bool = false)
    {
        self.start = start
        self.end = end
        self.value = value
        self.source = source
        self.userEntered = userEntered
    }
}

private let batchIDCounter = Mutex<UInt64>(1)

/// A batch id no other test in this process uses: tests run in parallel and the store answers a re-sent batch id
/// with its first acknowledgement, so a hand-picked id could collide with another test's batch.
func freshBatchID() -> UInt64 {
    batchIDCounter.withLock { next in
        defer { next += 1 }
        return next
    }
}

/// A batch of rows with a fresh batch id (so derived UUIDs differ between batches).
func makeBatch(
    subject: String = "anna", type: String, unit: String? = nil, rows: [Row]
) -> SampleBatch {
    let id = freshBatchID()
    let unit = unit ?? (try! QuantityType.named(type)).canonicalUnit.symbol
    var batch = SampleBatch(batchID: id, subject: subject, typeIdentifier: type, unit: unit)
    for row in rows {
        batch.append(
            start: row.start, end: row.end, value: row.value, source: row.source,
            metadata: row.userEntered ? [MetadataKey.wasUserEntered: .number(1)] : [:])
    }
    return batch
}

/// A store holding `rows` of one type for subject "anna".
func store(type: String, unit: String? = nil, rows: [Row]) throws -> HealthStore {
    let store = HealthStore()
    _ = try store.insert(makeBatch(type: type, unit: unit, rows: rows))
    return store
}

/// Whether two doubles agree to a relative tolerance.
func close(_ a: Double?, _ b: Double, tolerance: Double = 1e-9) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tolerance * max(1, abs(b))
}

/// The HealthError `body` throws, or nil. (Tests compare codes by raw value and never hand a HealthError to
/// `#expect`: on this branch's HealthModel, describing an ErrorCode recurses forever.)
func healthError(_ body: () throws -> Void) -> HealthError? {
    do {
        try body()
        return nil
    } catch let error as HealthError {
        return error
    } catch {
        return HealthError(.internalError, "unexpected error type: \(type(of: error))")
    }
}
