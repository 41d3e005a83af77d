import Foundation
import Testing

import HealthModel

/// Sample rules of HEALTHKIT.md §3 and the columnar batch.
@Suite struct SampleTests {
    static let watch = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.W")

    static func sample(
        _ type: String, _ value: Double, _ unit: String, start: Timestamp = 0, end: Timestamp = 60,
        subject: String = "me"
    ) throws -> Sample {
        Sample(
            subject: subject, type: try QuantityType.named(type), start: start, end: end, value: value,
            unit: try HealthUnit(parsing: unit), source: watch)
    }

    @Test func validSamplesPass() throws {
        try Self.sample("stepCount", 120, "count").validate()
        try Self.sample("stepCount", 0, "count").validate()
        try Self.sample("heartRate", 72, "count/min", start: 5, end: 5).validate()
        try Self.sample("heartRate", 1.2, "Hz").validate()
        try Self.sample("bodyTemperature", -5, "degC").validate()
        try Self.sample("bodyMass", 154, "lb").validate()
        try Self.sample("bloodGlucose", 5.5, "mmol<180.15588000005408>/L").validate()
    }

    @Test(
        arguments: [
            (
                "stepCount", 10.0, "count", Timestamp(10), Timestamp(5), ErrorCode.invalidSample,
                "stepCount sample ends (5) before it starts (10)"
            ),
            ("stepCount", .nan, "count", 0, 60, .invalidSample, "stepCount sample value nan is not a finite number"),
            (
                "heartRate", .infinity, "count/min", 0, 60, .invalidSample,
                "heartRate sample value inf is not a finite number"
            ),
            ("bodyMass", -.infinity, "kg", 0, 60, .invalidSample, "bodyMass sample value -inf is not a finite number"),
            (
                "stepCount", -1.0, "count", 0, 60, .invalidSample,
                "stepCount is cumulative and cannot take the negative value -1.0"
            ),
            (
                "distanceWalkingRunning", -0.5, "mi", 0, 60, .invalidSample,
                "distanceWalkingRunning is cumulative and cannot take the negative value -0.5"
            ),
            ("stepCount", 1.0, "kg", 0, 60, .incompatibleUnit, #"unit "kg" is not compatible with stepCount (count)"#),
            (
                "heartRate", 72.0, "count", 0, 60, .incompatibleUnit,
                #"unit "count" is not compatible with heartRate (count/min)"#
            ),
            (
                "dietaryWater", 1e308, "L", 0, 60, .invalidSample,
                "dietaryWater sample value 1e+308 L is out of range in mL (inf)"
            ),
        ] as [(String, Double, String, Timestamp, Timestamp, ErrorCode, String)])
    func invalidSamplesNameTheProblem(
        type: String, value: Double, unit: String, start: Timestamp, end: Timestamp, code: ErrorCode, message: String
    ) throws {
        let sample = try Self.sample(type, value, unit, start: start, end: end)
        #expect(throws: HealthError(code, message)) { try sample.validate() }
    }

    @Test func subjectMustBeNonEmptyAndShort() throws {
        #expect(throws: HealthError(.invalidArgument, "the subject is empty")) {
            try Self.sample("stepCount", 1, "count", subject: "").validate()
        }
        let long = String(repeating: "é", count: 129)  // 258 UTF-8 bytes
        #expect(throws: HealthError(.invalidArgument, "the subject is longer than 256 bytes")) {
            try Self.sample("stepCount", 1, "count", subject: long).validate()
        }
        try Self.sample("stepCount", 1, "count", subject: String(repeating: "a", count: 256)).validate()
    }

    @Test func canonicalValueConvertsToTheTypeUnit() throws {
        #expect(try Self.sample("distanceWalkingRunning", 1, "mi").canonicalValue() == 1609.344)
        #expect(abs(try Self.sample("heartRate", 1.2, "count/s").canonicalValue() - 72) < 1e-9)
        #expect(abs(try Self.sample("bodyTemperature", 98.6, "degF").canonicalValue() - 37) < 1e-9)
        #expect(throws: HealthError.self) { try Self.sample("stepCount", 1, "m").canonicalValue() }
    }

    @Test func errorCodesClassifyRetryAndClose() {
        #expect(ErrorCode.busy.isRetryable)
        #expect(!ErrorCode.invalidSample.isRetryable)
        #expect(ErrorCode.malformedFrame.closesConnection)
        #expect(!ErrorCode.invalidUnit.closesConnection)
        #expect(ErrorCode.incompatibleUnit.description == "incompatibleUnit (202)")
        #expect(HealthError(.timedOut, "slow").isRetryable)
        #expect(Set(ErrorCode.allCases.map(\.rawValue)).count == ErrorCode.allCases.count)
    }
}

/// The columnar batch: derived UUIDs, append and shape checks.
@Suite struct SampleBatchTests {
    static let watch = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.W")
    static let phone = SourceInfo(name: "Phone")

    @Test func derivedUUIDLayout() {
        let uuid = SampleBatch.derivedUUID(batchID: 0x0102_0304_0506_0708, row: 9)
        #expect(uuid.uuidString == "01020304-0506-0708-0000-0009686B6400")
        let last = SampleBatch.derivedUUID(batchID: .max, row: .max)
        #expect(last.uuidString == "FFFFFFFF-FFFF-FFFF-FFFF-FFFF686B6400")
    }

    @Test func derivedUUIDsAreDeterministicAndDistinct() {
        var seen = Set<UUID>()
        for batch in UInt64(1)...4 {
            for row in UInt32(0)..<50 {
                let uuid = SampleBatch.derivedUUID(batchID: batch, row: row)
                #expect(uuid == SampleBatch.derivedUUID(batchID: batch, row: row))
                seen.insert(uuid)
            }
        }
        #expect(seen.count == 200)
    }

    @Test func appendBuildsColumnsAndASourceDictionary() {
        var batch = SampleBatch(batchID: 7, subject: "me", typeIdentifier: "stepCount", unit: "count")
        batch.append(start: 0, end: 60, value: 10, source: Self.watch)
        batch.append(start: 60, end: 120, value: 20, source: Self.phone)
        batch.append(start: 120, end: 180, value: 30, source: Self.watch)
        #expect(batch.count == 3)
        #expect(batch.sources == [Self.watch, Self.phone])
        #expect(batch.sourceIndices == [0, 1, 0])
        #expect(batch.starts == [0, 60, 120])
        #expect(batch.ends == [60, 120, 180])
        #expect(batch.values == [10, 20, 30])
        #expect(batch.uuids == nil)
        #expect(batch.metadata == nil)
        #expect(batch.uuid(row: 2) == SampleBatch.derivedUUID(batchID: 7, row: 2))
        #expect(throws: Never.self) { try batch.validateShape() }
    }

    @Test func anExplicitUUIDMaterialisesTheDerivedOnes() throws {
        var batch = SampleBatch(batchID: 9, subject: "me", typeIdentifier: "stepCount", unit: "count")
        batch.append(start: 0, end: 1, value: 1, source: Self.watch)
        let explicit = UUID()
        batch.append(start: 1, end: 2, value: 1, source: Self.watch, uuid: explicit)
        batch.append(start: 2, end: 3, value: 1, source: Self.watch)
        #expect(
            batch.uuids == [
                SampleBatch.derivedUUID(batchID: 9, row: 0), explicit, SampleBatch.derivedUUID(batchID: 9, row: 2),
            ])
        #expect(batch.uuid(row: 1) == explicit)
        #expect(batch.uuid(row: 2) == SampleBatch.derivedUUID(batchID: 9, row: 2))
        try batch.validateShape()
    }

    @Test func metadataColumnIsPaddedOnceAnyRowHasSome() throws {
        var batch = SampleBatch(batchID: 1, subject: "me", typeIdentifier: "bodyMass", unit: "kg")
        batch.append(start: 0, end: 0, value: 70, source: Self.phone)
        batch.append(
            start: 10, end: 10, value: 71, source: Self.phone, metadata: [MetadataKey.wasUserEntered: .number(1)])
        batch.append(start: 20, end: 20, value: 72, source: Self.phone)
        #expect(batch.metadata?.count == 3)
        #expect(batch.metadata?[0] == [:])
        #expect(batch.metadata?[1] == [MetadataKey.wasUserEntered: .number(1)])
        #expect(batch.metadata?[2] == [:])
        try batch.validateShape()
    }

    @Test func validateShapeRejectsRaggedColumns() {
        var base = SampleBatch(batchID: 3, subject: "me", typeIdentifier: "stepCount", unit: "count")
        base.append(start: 0, end: 1, value: 1, source: Self.watch)
        base.append(start: 1, end: 2, value: 2, source: Self.watch)
        let ragged = HealthError(.malformedPayload, "batch 3: columns have different lengths")

        var shortEnds = base
        shortEnds.ends.removeLast()
        #expect(throws: ragged) { try shortEnds.validateShape() }
        var longValues = base
        longValues.values.append(3)
        #expect(throws: ragged) { try longValues.validateShape() }
        var shortIndices = base
        shortIndices.sourceIndices.removeLast()
        #expect(throws: ragged) { try shortIndices.validateShape() }
        var fewUUIDs = base
        fewUUIDs.uuids = [UUID()]
        #expect(throws: ragged) { try fewUUIDs.validateShape() }
        var fewMetadata = base
        fewMetadata.metadata = [[:], [:], [:]]
        #expect(throws: ragged) { try fewMetadata.validateShape() }
    }

    @Test func validateShapeRejectsASourceIndexOutsideTheDictionary() {
        var batch = SampleBatch(batchID: 4, subject: "me", typeIdentifier: "stepCount", unit: "count")
        batch.append(start: 0, end: 1, value: 1, source: Self.watch)
        batch.sourceIndices[0] = 1
        #expect(throws: HealthError(.malformedPayload, "batch 4: source index 1 is outside the dictionary of 1")) {
            try batch.validateShape()
        }
        let empty = SampleBatch(batchID: 5, subject: "me", typeIdentifier: "stepCount", unit: "count")
        #expect(throws: Never.self) { try empty.validateShape() }
    }
}

/// Error codes: names, classification and uniqueness.
@Suite struct ErrorCodeTests {
    @Test(arguments: ErrorCode.allCases)
    func nameRoundTripsAndDescriptionShowsTheNumber(code: ErrorCode) {
        #expect(ErrorCode(name: code.name) == code)
        #expect(code.description == "\(code.name) (\(code.rawValue))")
        #expect(code.name.first?.isLowercase == true)
    }

    @Test func namesAreDistinctAndUnknownNamesFail() {
        #expect(Set(ErrorCode.allCases.map(\.name)).count == ErrorCode.allCases.count)
        #expect(ErrorCode(name: "noSuchCode") == nil)
        #expect(ErrorCode.noData.name == "noData")
        #expect(ErrorCode.internalError.rawValue == 500)
    }
}
