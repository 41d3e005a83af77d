import Foundation
import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

@Suite("Insert")
struct InsertTests {
    @Test(
        "rows arriving in any order are stored sorted by start",
        arguments: [
            [[3, 1, 2], [0, 5, 4]],
            [[0, 2, 4, 6], [1, 3, 5, 7]],
            [[10, 11, 12], [0, 1, 2], [5, 6, 7]],
            [[5, 5, 5], [5, 1, 9], [2]],
            [[0, 1, 2], [3, 4], [5]],
        ])
    func staysSorted(batches: [[Int]]) throws {
        let store = HealthStore()
        for starts in batches {
            let rows = starts.map { Row(sec(Double($0)), sec(Double($0) + 0.5), Double($0)) }
            _ = try store.insert(makeBatch(type: "stepCount", rows: rows))
        }
        let result = try store.samples(subject: "anna", type: "stepCount")
        let expected = batches.flatMap { $0 }.sorted().map { sec(Double($0)) }
        #expect(result.starts == expected)
        #expect(result.values == batches.flatMap { $0 }.sorted().map(Double.init))
        #expect(Set(result.uuids).count == expected.count)
    }

    @Test("a late batch among many stored rows is merged in place")
    func lateBatchMerges() throws {
        var generator = SplitMix64(seed: 7)
        let store = HealthStore()
        var all: [(start: Timestamp, sequence: Double)] = []
        for batch in 0..<20 {
            let base = Double(batch) * 1000
            // Whole seconds in a narrow range: many equal starts, which must keep their arrival order.
            var starts = (0..<50).map { _ in base + Double.random(in: 0..<5000, using: &generator).rounded() }
            if batch % 3 == 0 { starts.sort() }
            let rows = starts.map { start -> Row in
                all.append((sec(start), Double(all.count)))
                return Row(sec(start), sec(start), all.last!.sequence)
            }
            _ = try store.insert(makeBatch(type: "heartRate", rows: rows))
        }
        let result = try store.samples(subject: "anna", type: "heartRate")
        let expected = all.sorted { ($0.start, $0.sequence) < ($1.start, $1.sequence) }
        #expect(result.starts == expected.map(\.start))
        #expect(result.values == expected.map(\.sequence), "equal starts keep their arrival order")
        // The anchors moved with their rows: changes from the beginning come back in arrival order.
        let changes = try store.changes(subject: "anna", type: "heartRate", anchor: 0)
        #expect(changes.added.values == all.map(\.sequence))
    }

    @Test(
        "values are converted to the canonical unit on the way in",
        arguments: [
            ("bodyMass", "lb", 150.0, 68.0388),
            ("bodyMass", "g", 70_000.0, 70.0),
            ("bodyTemperature", "degF", 98.6, 37.0),
            ("distanceWalkingRunning", "km", 1.5, 1500.0),
            ("heartRate", "count/s", 1.0, 60.0),
            ("dietaryWater", "L", 0.25, 250.0),
            ("stepCount", "count", 42.0, 42.0),
        ])
    func convertsOnInput(type: String, unit: String, value: Double, canonical: Double) throws {
        let store = try store(type: type, unit: unit, rows: [Row(0, sec(1), value)])
        let result = try store.samples(subject: "anna", type: try QuantityType.named(type))
        #expect(close(result.values.first, canonical, tolerance: 1e-5))
        #expect(result.unit == (try QuantityType.named(type)).canonicalUnit)
    }

    @Test(
        "bad batches are rejected whole, and the error names the culprit",
        arguments: [
            ("stepCuont", "count", [Row(0, 1, 1)], ErrorCode.unknownQuantityType.rawValue, ["stepCuont", "stepCount"]),
            ("stepCount", "kg", [Row(0, 1, 1)], ErrorCode.incompatibleUnit.rawValue, ["kg", "stepCount"]),
            ("stepCount", "furlong", [Row(0, 1, 1)], ErrorCode.invalidUnit.rawValue, ["furlong"]),
            (
                "stepCount", "count", [Row(0, 1, 1), Row(5, 6, 2), Row(7, 8, -3)], ErrorCode.invalidSample.rawValue,
                ["row 2", "negative", "-3"]
            ),
            (
                "heartRate", "count/min", [Row(0, 1, 60), Row(10, 5, 70)], ErrorCode.invalidSample.rawValue,
                ["row 1", "before it starts"]
            ),
            ("bodyMass", "kg", [Row(0, 0, .nan)], ErrorCode.invalidSample.rawValue, ["row 0", "finite"]),
        ])
    func rejectsNamingCulprit(type: String, unit: String, rows: [Row], code: UInt16, words: [String]) throws {
        let store = HealthStore()
        _ = try store.insert(makeBatch(type: "stepCount", rows: [Row(100, 200, 5)]))
        let batch = makeBatch(type: type, unit: unit, rows: rows)
        let error = healthError { _ = try store.insert(batch) }
        #expect(error?.code.rawValue == code)
        for word in words { #expect(error?.message.contains(word) == true, "\(error?.message ?? "") lacks \(word)") }
        #expect(store.info().totalSamples == 1)
    }

    @Test("a malformed batch shape and an empty subject are rejected")
    func rejectsShape() throws {
        let store = HealthStore()
        var batch = makeBatch(type: "stepCount", rows: [Row(0, 1, 1)])
        batch.values.append(3)
        let shapeError = healthError { _ = try store.insert(batch) }
        #expect(shapeError?.code.rawValue == ErrorCode.malformedPayload.rawValue)
        #expect(shapeError?.message == "batch \(batch.batchID): columns have different lengths")
        let anonymous = makeBatch(subject: "", type: "stepCount", rows: [Row(0, 1, 1)])
        let subjectError = healthError { _ = try store.insert(anonymous) }
        #expect(subjectError?.code.rawValue == ErrorCode.invalidArgument.rawValue)
        #expect(subjectError?.message == "the subject is empty")
    }

    @Test("explicit UUIDs are kept, derived ones follow the batch id")
    func keepsUUIDs() throws {
        let store = HealthStore()
        let explicit = UUID()
        var batch = makeBatch(type: "stepCount", rows: [Row(0, 10, 1)])
        batch.append(start: 20, end: 30, value: 2, source: phone, uuid: explicit)
        let result = try store.insert(batch)
        #expect(result.inserted == 2)
        let stored = try store.samples(subject: "anna", type: "stepCount")
        #expect(stored.uuids == [SampleBatch.derivedUUID(batchID: batch.batchID, row: 0), explicit])
    }

    @Test(
        "a large series of regular samples costs at most 4 bytes per sample in sealed blocks and head, capacity included; sent UUIDs add 16 and a fingerprint",
        arguments: [(false, false), (true, false), (false, true)])
    func memoryPerSample(outOfOrder: Bool, sentUUIDs: Bool) throws {
        let store = HealthStore()
        let perBatch = 1000
        let batches = 60
        for b in 0..<batches {
            // Out of order: batches arrive in swapped pairs, each odd one landing before the one just stored.
            let batchIndex = outOfOrder ? b ^ 1 : b
            let rows = (0..<perBatch).map { i -> Row in
                let t = sec(Double(batchIndex * perBatch + i) * 60)
                return Row(t, t + sec(60), 1, i % 2 == 0 ? phone : watch)
            }
            var batch = makeBatch(type: "stepCount", rows: rows)
            if sentUUIDs { batch.uuids = (0..<perBatch).map { _ in UUID() } }
            _ = try store.insert(batch)
        }
        let info = store.info()
        #expect(info.totalSamples == perBatch * batches)
        let bytesPerSample = Double(info.approximateBytes) / Double(info.totalSamples)
        // Rows: sealed blocks (regular starts and durations, one value, two sources interleaved row by row) and
        // the head's 2,656 rows (34 bytes each, growing by an eighth): 3.6 in order, 2.5 out of order (its late
        // rows reseal blocks of up to 8,192 rows). Sent UUIDs stay in the batch table: 16 bytes and some slack.
        let rowBytes = 4.0
        let limit = sentUUIDs ? rowBytes + 17 : rowBytes
        #expect(bytesPerSample > 0.5 && bytesPerSample <= limit, "\(bytesPerSample) B/sample")
        // The retry bookkeeping: derived UUIDs are found through the batch table (a few bytes per batch); a
        // sent UUID costs a 64-bit fingerprint in a hash set kept 3/8 to 3/4 full.
        let indexBytesPerSample = Double(info.indexBytes) / Double(info.totalSamples)
        if sentUUIDs {
            #expect(indexBytesPerSample >= 8 && indexBytesPerSample <= 22, "\(indexBytesPerSample) index B/sample")
        } else {
            #expect(indexBytesPerSample <= 1, "\(indexBytesPerSample) index bytes per sample")
        }
        let stored = try store.samples(subject: "anna", type: "stepCount")
        #expect(stored.starts == stored.starts.sorted())
    }

    @Test("one-sample batches share batch-table entries: a few bytes of rows plus a kept UUID and its fingerprint")
    func memoryOfSingleSampleBatches() throws {
        let store = HealthStore()
        let rows = 20_000
        for i in 0..<rows {
            let t = sec(Double(i) * 60)
            _ = try store.insert(makeBatch(type: "heartRate", rows: [Row(t, t, 60 + Double(i % 40))]))
        }
        let info = store.info()
        #expect(info.totalSamples == rows)
        let perSample = Double(info.approximateBytes + info.indexBytes) / Double(rows)
        let parts = store.read(try QuantityType.named("heartRate")) { state -> String in
            let series = state.series["anna"]!
            return
                "blocks \(series.rows.blocks.count) head \(series.rows.head.count) rows \(series.rows.approximateBytes) B table \(series.batches.approximateBytes) "
                + "entries \(series.batches.entries.count) ledger \(series.ledger.approximateBytes) "
                + "log \(series.changeLog.approximateBytes) sources \(series.sources.approximateBytes)"
        }
        #expect(perSample <= 4 + 16 + 22, "\(perSample) bytes per sample: \(parts)")
        // The first batch, sent again long after (its id no longer among the recent ones), adds nothing.
        let stored = try store.samples(subject: "anna", type: "heartRate")
        var again = SampleBatch(
            batchID: freshBatchID(), subject: "anna", typeIdentifier: "heartRate", unit: "count/min")
        again.append(
            start: stored.starts[0], end: stored.ends[0], value: stored.values[0], source: phone, uuid: stored.uuids[0])
        #expect(try store.insert(again) == InsertResult(inserted: 0, duplicates: 1))
        #expect(
            try store.delete(subject: "anna", type: "heartRate", filter: SampleFilter(uuids: [stored.uuids[5]])) == 1)
        #expect(try store.samples(subject: "anna", type: "heartRate").count == rows - 1)
    }

    @Test("info counts samples per type and distinct subjects")
    func info() throws {
        let store = HealthStore()
        _ = try store.insert(makeBatch(subject: "anna", type: "stepCount", rows: [Row(0, 1, 1), Row(2, 3, 1)]))
        _ = try store.insert(makeBatch(subject: "ben", type: "stepCount", rows: [Row(0, 1, 1)]))
        _ = try store.insert(makeBatch(subject: "anna", type: "heartRate", rows: [Row(0, 0, 60)]))
        try store.setSourcePriority(subject: "carla", type: "bodyMass", order: [phone])
        let info = store.info()
        #expect(info.samplesByType == ["stepCount": 3, "heartRate": 1])
        #expect(info.subjects == 2)
        #expect(info.totalSamples == 4)
        #expect(info.approximateBytes > 0)
    }
}
