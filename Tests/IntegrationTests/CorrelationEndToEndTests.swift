import Foundation
import HKQKit
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Correlations through the real hkd and hkq (HEALTHKIT.md §13): blood pressure readings imported as objects
/// naming their member samples, read back by the client and `hkq samples bloodPressure`, counted once, and all
/// of it across a kill -9 after the acknowledgements (log replay), a deletion and a snapshot; grants through the
/// correlation type or its member types.
@Suite("correlations end to end", .serialized)
struct CorrelationEndToEndTests {
    static let systolic = try! QuantityType.named("bloodPressureSystolic")
    static let diastolic = try! QuantityType.named("bloodPressureDiastolic")

    /// Two readings as `<Correlation>` elements (members also at top level, as exports write them), and one pair
    /// of records written without a correlation.
    static let xml: String = {
        func member(_ type: String, _ value: Int, _ time: String) -> String {
            #"<Record type="HKQuantityTypeIdentifierBloodPressure\#(type)" sourceName="Cuff" unit="mmHg" startDate="\#(time)" endDate="\#(time)" value="\#(value)"/>"#
        }
        func reading(_ time: String, _ high: Int, _ low: Int, entered: Int) -> String {
            let members = member("Systolic", high, time) + "\n" + member("Diastolic", low, time)
            return members + "\n"
                + #"<Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Cuff" sourceVersion="2.1" startDate="\#(time)" endDate="\#(time)">"#
                + "\n" + #" <MetadataEntry key="HKWasUserEntered" value="\#(entered)"/>"# + "\n" + members
                + "\n</Correlation>"
        }
        let loose = "2024-02-03 08:00:00 +0000"
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <HealthData locale="en_US">
            \(reading("2024-02-01 08:00:00 +0000", 121, 79, entered: 0))
            \(reading("2024-02-02 08:00:00 +0000", 134, 86, entered: 1))
            \(member("Systolic", 140, loose))
            \(member("Diastolic", 90, loose))
            </HealthData>

            """
    }()

    static func run(_ arguments: [String]) async -> (status: Int32, out: String, err: String) {
        let (console, out, err) = Console.capturing()
        let status = await HKQ.standard.run(arguments: arguments, environment: [:], console: console)
        return (status, out.text, err.text)
    }

    static func importSummary(_ hkd: TestServer, _ path: String) async throws -> [String: Any] {
        let imported = await run(hkd.hkqServer + ["--subject", "anna", "--format", "json", "import", path])
        #expect(imported.status == 0, "\(imported.err)")
        return try #require(try JSONSerialization.jsonObject(with: Data(imported.out.utf8)) as? [String: Any])
    }

    /// What a server holds after the import: the two correlations with their metadata and members, the member
    /// samples once each, and hkq's rows (two stored readings, the loose pair joined, with no UUID).
    static func expectReadings(_ server: TestServer) async throws -> [Correlation] {
        let client = server.client()
        defer { client.close() }
        let result = try await client.correlations(subject: "anna", filter: CorrelationFilter(types: [.bloodPressure]))
        let stored = result.correlations.map(\.correlation)
        #expect(stored.count == 2 && result.lastAnchor >= 2)
        #expect(stored.map { $0.metadata["HKWasUserEntered"] } == [.number(0), .number(1)])
        #expect(stored.allSatisfy { $0.source.version == "2.1" })
        let high = try await client.samples(Self.systolic, subject: "anna")
        let low = try await client.samples(Self.diastolic, subject: "anna")
        #expect(high.map(\.value) == [121, 134, 140] && low.map(\.value) == [79, 86, 90])
        #expect(stored.map { $0.member(Self.systolic.identifier)?.uuid } == high.prefix(2).map(\.uuid))
        #expect(stored.map { $0.member(Self.diastolic.identifier)?.uuid } == low.prefix(2).map(\.uuid))
        // A correlation adds no sample: each member is counted once.
        let info = try await client.serverInfo()
        let counts = Dictionary(uniqueKeysWithValues: info.samplesPerType.map { ($0.type, $0.samples) })
        #expect(counts[Self.systolic.identifier] == 3 && counts[Self.diastolic.identifier] == 3)

        let pairs = await run(
            server.hkqServer + ["--subject", "anna", "--format", "json", "samples", "bloodPressure", "--tz", "UTC"])
        #expect(pairs.status == 0, "\(pairs.err)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(pairs.out.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["bloodPressureSystolic"] as? Double } == [121, 134, 140])
        #expect(rows.map { $0["bloodPressureDiastolic"] as? Double } == [79, 86, 90])
        #expect(rows.map { $0["uuid"] as? String } == stored.map(\.uuid.uuidString) + [nil])
        return stored
    }

    @Test("blood pressure correlations round-trip through import, query, the log (kill -9) and a snapshot")
    func roundTrip() async throws {
        let directory = try TestDirectory(prefix: "hk-correlations")
        let path = directory.appending("export.xml")
        try Data(Self.xml.utf8).write(to: URL(fileURLWithPath: path))
        let hkd = try await TestServer()
        let first = try await Self.importSummary(hkd, path)
        #expect(first["correlations"] as? Int == 2 && first["correlationsInserted"] as? Int == 2, "\(first)")
        let skipped = (first["skipped"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
        #expect(first["samples"] as? Int == 6 && skipped == ["HealthData locale"], "\(first)")
        let again = try await Self.importSummary(hkd, path)
        #expect(again["correlationsInserted"] as? Int == 0 && again["inserted"] as? Int == 0, "\(again)")
        let stored = try await Self.expectReadings(hkd)

        await hkd.kill()  // after every acknowledgement: the log alone holds them
        let replayed = try await hkd.restart()
        #expect(try await Self.expectReadings(replayed) == stored)
        let client = replayed.client()
        let anchor = try await client.correlations(subject: "anna").lastAnchor
        #expect(try await client.deleteCorrelations([stored[0].uuid], subject: "anna") == 1)
        let changes = try await client.correlations(subject: "anna", filter: CorrelationFilter(afterAnchor: anchor))
        #expect(changes.correlations.isEmpty && changes.deleted.map(\.uuid) == [stored[0].uuid])
        client.close()
        #expect(await replayed.stop() == 0)  // a snapshot with the correlation file

        let restored = try await replayed.restart()
        let check = restored.client()
        defer { check.close() }
        #expect(try await check.correlations(subject: "anna").correlations.map(\.correlation) == [stored[1]])
        // The deleted correlation's samples stay; hkq now joins them by interval and source.
        #expect(try await check.samples(Self.systolic, subject: "anna").count == 3)
        let rows = await Self.run(
            restored.hkqServer + ["--subject", "anna", "--format", "csv", "samples", "bloodPressure", "--tz", "UTC"])
        #expect(rows.out.split(separator: "\n").count == 4, "\(rows.out)")
        await restored.stop()
    }

    @Test("grants: the correlation type or all its member types; share without read sees its own; none is refused")
    func grants() async throws {
        let hkd = try await TestServer()
        let admin = hkd.client()
        defer { admin.close() }
        let start: Timestamp = 1_706_774_400_000_000
        func reading(_ source: String, day: Int64) -> Correlation {
            Correlation(
                type: .bloodPressure, start: start + day * Micros.day, end: start + day * Micros.day,
                source: SourceInfo(name: source),
                members: [
                    CorrelationMember(uuid: UUID(), type: Self.systolic),
                    CorrelationMember(uuid: UUID(), type: Self.diastolic),
                ])
        }
        _ = try await admin.insertCorrelations([reading("Cuff", day: 0)], subject: "anna")
        func identity(_ name: String, _ grants: [TypeGrant]) async throws -> HealthClient {
            let created = try await admin.administer(
                .create(IdentitySpec(name: name, subjects: ["anna"], grants: grants)))
            return hkd.client(token: created.token)
        }
        // Read on both member types reads every reading; without share it may not write one.
        let viewer = try await identity(
            "bp-viewer",
            [
                TypeGrant(type: "bloodPressureSystolic", share: false, read: true),
                TypeGrant(type: "HKQuantityTypeIdentifierBloodPressureDiastolic", share: false, read: true),
            ])
        defer { viewer.close() }
        #expect(try await viewer.correlations(subject: "anna").correlations.count == 1)
        await Self.expectForbidden {
            _ = try await viewer.insertCorrelations([reading("Viewer", day: 1)], subject: "anna")
        }
        // Share on the correlation type without read: its own readings only, and it deletes only those.
        let writer = try await identity(
            "bp-sync", [TypeGrant(type: "HKCorrelationTypeIdentifierBloodPressure", share: true, read: false)])
        defer { writer.close() }
        let own = reading("Sync", day: 2)
        #expect(try await writer.insertCorrelations([own], subject: "anna").inserted == 1)
        #expect(try await writer.correlations(subject: "anna").correlations.map(\.correlation.uuid) == [own.uuid])
        #expect(try await writer.deleteCorrelations([reading("Cuff", day: 0).uuid], subject: "anna") == 0)
        #expect(try await admin.correlations(subject: "anna").correlations.count == 2)
        // Read on one member type only does not read the correlation type.
        let half = try await identity(
            "systolic-only", [TypeGrant(type: "bloodPressureSystolic", share: true, read: true)])
        defer { half.close() }
        #expect(try await half.correlations(subject: "anna").correlations.isEmpty)
        await Self.expectForbidden { _ = try await half.insertCorrelations([reading("Half", day: 3)], subject: "anna") }
        await Self.expectForbidden { _ = try await half.deleteCorrelations([own.uuid], subject: "anna") }
        await hkd.stop()
    }

    static func expectForbidden(_ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("a request without the grant succeeded")
        } catch let error as HealthClientError {
            #expect(error.code.rawValue == ErrorCode.forbidden.rawValue)
        } catch {
            Issue.record("\(error)")
        }
    }
}
