import Foundation
import HealthClient
import HealthModel
import HealthWire
import Synchronization

/// The live-collection subscribers of one `hkbench live` run: one connection and one table per query, kept by
/// the clients' reader threads, so the run can tell when every subscriber holds the current buckets.
final class LiveSubscribers: @unchecked Sendable {
    let queries: [CollectionQuery]
    let tables: [LiveTable]
    /// The subscribers' clients; appended while subscribing, before any other thread reads it.
    var clients: [HealthClient] = []

    init(_ queries: [CollectionQuery]) {
        self.queries = queries
        tables = queries.map { _ in LiveTable() }
    }

    /// Seconds from now until every table equals a fresh collection query of its subject (at most 60 s; nil
    /// when some table still differs then).
    func caughtUp(port: Int) async throws -> Double? {
        let began = ContinuousClock.now
        let reader = LiveBenchmark.client(port, "fresh")
        defer { reader.close() }
        var fresh: [String: [Statistics]] = [:]
        for query in queries where fresh[query.subject] == nil {
            fresh[query.subject] = try await reader.collection(query).buckets
        }
        while ContinuousClock.now - began < .seconds(60) {
            if zip(queries, tables).allSatisfy({ query, table in table.agrees(with: fresh[query.subject]!) }) {
                let elapsed = (ContinuousClock.now - began).components
                return Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        return nil
    }

    /// Updates pushed in all and how long the subscribers took to hold the final buckets.
    func summary(caughtUp: Double?) -> String {
        let updates = tables.reduce(0) { $0 + $1.updates }
        let lag =
            caughtUp.map { String(format: "all current within %.0f ms of the last insert", $0 * 1e3) }
            ?? "NOT all current 60 s after the last insert"
        return "\(updates) updates pushed, \(lag)"
    }

    func close() {
        for client in clients { client.close() }
    }
}

/// One subscriber's buckets with data, by start, as a client applies the updates. Thread-safe.
final class LiveTable: Sendable {
    private let state = Mutex<(buckets: [Timestamp: Statistics], updates: Int)>(([:], 0))

    /// Updates applied so far.
    var updates: Int { state.withLock { $0.updates } }

    /// Applies a collection update (the first one holds every bucket).
    func apply(_ content: UpdateContent) {
        guard case .buckets(let result) = content else { return }
        state.withLock { state in
            for bucket in result.buckets {
                state.buckets[bucket.start] = LiveCollectionTable.hasData(bucket) ? bucket : nil
            }
            state.updates += 1
        }
    }

    /// Whether the table holds exactly `fresh`'s buckets, sums equal up to rounding (a bucket recomputed over a
    /// shorter range adds its pro-rated parts in another order).
    func agrees(with fresh: [Statistics]) -> Bool {
        state.withLock { state in
            fresh.count == state.buckets.count
                && fresh.allSatisfy { bucket in
                    guard let mine = state.buckets[bucket.start]?.figures.sum, let sum = bucket.figures.sum else {
                        return false
                    }
                    return abs(mine - sum) <= 1e-9 * max(1, abs(sum))
                }
        }
    }
}
