import Foundation
import HealthEngine
import HealthModel

// Correlations (HEALTHKIT.md §13): logged as record kinds 9 and 10 of type `correlation`.

extension DurableStore {
    /// Adds correlations for `subject` (see ``ObjectStore/insert(subject:_:writer:beforeApplying:)``): logged
    /// (record kind 9), applied, then durable before this returns. Their member samples are inserted apart.
    @discardableResult
    public func insertCorrelations(subject: String, _ correlations: [Correlation], writer: UInt32 = 0) throws -> (
        inserted: Int, duplicates: Int
    ) {
        try insert(
            correlations, into: store.correlations, subject: subject, writer: writer,
            logging: .correlations(subject: subject, correlations, writer: writer))
    }

    /// Deletes `subject`'s correlations with these UUIDs (only `writer`'s when set; their member samples stay);
    /// returns how many, once durable (record kind 10).
    public func deleteCorrelations(subject: String, uuids: [UUID], writer: UInt32? = nil) throws -> Int {
        let sorted = uuids.sorted { $0.uuidString < $1.uuidString }
        return try logged(
            .correlationDelete(subject: subject, uuids: sorted, writer: writer),
            sequenced: { hook in
                try store.correlations.delete(subject: subject, uuids: Set(uuids), writer: writer, sequencedBy: hook)
            })
    }
}

// Workout routes (HEALTHKIT.md §13): logged as record kind 11 of type `route`.

extension DurableStore {
    /// Adds workout routes for `subject`: logged (record kind 11), applied, then durable before this returns.
    @discardableResult
    public func insertRoutes(subject: String, _ routes: [WorkoutRoute], writer: UInt32 = 0) throws -> (
        inserted: Int, duplicates: Int
    ) {
        try insert(
            routes, into: store.routes, subject: subject, writer: writer,
            logging: .routes(subject: subject, routes, writer: writer))
    }

    /// Inserts `objects` for `subject` by `writer` into `objectStore`, logging `record` once the checks passed.
    func insert<Object: StorableObject>(
        _ objects: [Object], into objectStore: ObjectStore<Object>, subject: String, writer: UInt32,
        logging record: LogChange
    ) throws -> (inserted: Int, duplicates: Int) {
        try logged(
            record,
            sequenced: { hook in try objectStore.insert(subject: subject, objects, writer: writer, sequencedBy: hook) })
    }
}
