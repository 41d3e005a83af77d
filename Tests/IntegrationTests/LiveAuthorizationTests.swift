import Foundation
import HealthClient
import HealthModel
import HealthWire
import Synchronization
import TestSupport
import Testing

/// HealthKit's read rule on changes queries and subscriptions (HEALTHKIT.md §9, §10): an identity without the
/// read grant sees only the samples, and deletions, it wrote itself; a subject outside its own is forbidden.
@Suite("hkd live updates under authorization", .serialized)
struct LiveAuthorizationTests {
    /// What a subscription pushed, in order; filled by a reading task, read by the test. Thread-safe.
    final class Collected<Element: Sendable>: Sendable {
        private let items = Mutex<[Element]>([])

        func append(_ element: Element) { items.withLock { $0.append(element) } }

        var count: Int { items.withLock { $0.count } }

        /// Element `index` (0-based), waiting up to `wait` for it; `nil` if it did not come.
        func element(_ index: Int, within wait: Duration = .seconds(30)) async throws -> Element? {
            try? await waitUntil(timeout: wait, "pushed element \(index)") { count > index }
            return items.withLock { $0.count > index ? $0[index] : nil }
        }
    }

    @Test("a read-denied identity's changes, observer and anchored subscription see only its own samples")
    func readDeniedSeesOnlyItsOwn() async throws {
        let (hkd, identities) = try await AuthorizationTests.populatedServer()
        let writerToken = try #require(identities.first { $0.spec.name == "writer" }).token
        let admin = hkd.client(name: "admin")
        let writer = hkd.client(name: "writer", token: writerToken)
        defer {
            admin.close()
            writer.close()
        }
        // anna's stepCount: 10 samples by the admin (value 1), 3 by the writer (value 100).
        let initial = try await writer.changes("stepCount", subject: "anna", since: 0)
        #expect(initial.added.count == 3 && initial.added.values.allSatisfy { $0 == 100 })
        #expect(initial.deleted.isEmpty && !initial.hasMore)
        #expect(try await admin.changes("stepCount", subject: "anna", since: 0).added.count == 13)

        let observed = Collected<UInt64>()
        let anchored = Collected<ChangesResult>()
        let observer = Task {
            for try await anchor in writer.observe("stepCount", subject: "anna") { observed.append(anchor) }
        }
        let anchoredTask = Task {
            let query = ChangesQuery(subject: "anna", type: "stepCount", anchor: 0)
            for try await result in writer.anchoredChanges(query) { anchored.append(result) }
        }
        defer {
            observer.cancel()
            anchoredTask.cancel()
        }
        let first = try #require(try await anchored.element(0))
        #expect(first.added.count == 3 && first.added.values.allSatisfy { $0 == 100 })

        // The admin's insert and deletion: nothing reaches the read-denied subscriber, nor its changes query.
        let adminUUID = try #require(
            try await admin.samples("stepCount", subject: "anna").first { $0.value == 1 }?.uuid)
        _ = try await admin.insert(
            try AuthorizationTests.samples("stepCount", subject: "anna", count: 2, value: 1, offset: 300))
        #expect(try await admin.delete("stepCount", subject: "anna", .uuids([adminUUID])) == 1)
        let quiet = try await writer.changes("stepCount", subject: "anna", since: initial.anchor)
        #expect(quiet.added.count == 0 && quiet.deleted.isEmpty)
        // Its own insert and deletion do arrive, and only they. Pushes of one subscription keep the order of the
        // changes, so a push for the admin's insert or deletion (committed first) would come before these: the
        // first push of each subscription must be the writer's own insert, with its anchor.
        _ = try await writer.insert(
            try AuthorizationTests.samples("stepCount", subject: "anna", count: 1, value: 100, offset: 400))
        let pushed = try #require(try await anchored.element(1))
        #expect(pushed.added.count == 1 && pushed.added.values == [100] && pushed.deleted.isEmpty)
        #expect(try await observed.element(0) == pushed.anchor, "the observer's first push is the writer's insert")
        let ownUUID = try #require(pushed.added.uuids?.first)
        #expect(try await writer.delete("stepCount", subject: "anna", .uuids([ownUUID])) == 1)
        let deletion = try #require(try await anchored.element(2))
        #expect(deletion.added.count == 0 && deletion.deleted.map(\.uuid) == [ownUUID])
        let all = try await writer.changes("stepCount", subject: "anna", since: initial.anchor)
        #expect(all.added.count == 0 && all.deleted.map(\.uuid) == [ownUUID])
        _ = await hkd.stop()
    }

    @Test("changes and subscriptions on a subject outside the identity's are forbidden")
    func foreignSubjectForbidden() async throws {
        let (hkd, identities) = try await AuthorizationTests.populatedServer()
        let reader = hkd.client(
            name: "reader", token: try #require(identities.first { $0.spec.name == "reader" }).token)
        defer { reader.close() }
        do {
            _ = try await reader.changes("stepCount", subject: "ben", since: 0)
            Issue.record("a changes query on a foreign subject must fail")
        } catch {
            #expect(error.code == .forbidden)
        }
        var failure: ErrorCode?
        do {
            for try await _ in reader.observe("stepCount", subject: "ben") { break }
        } catch let error as HealthClientError {
            failure = error.code
        }
        #expect(failure == .forbidden)
        _ = await hkd.stop()
    }
}
