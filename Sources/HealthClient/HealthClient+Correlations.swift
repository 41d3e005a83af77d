import Foundation
import HealthModel
import HealthWire

// Correlations (HEALTHKIT.md §13): objects of their own on the server that name their member samples; grants
// through the correlation type or its member types.

extension HealthClient {
    /// Adds correlations for `subject`: all or none; correlations already stored (same UUID, same content) are
    /// counted as duplicates. Their member samples are inserted as ordinary samples (``insert(_:)``), before or
    /// after: a correlation only names them.
    public func insertCorrelations(_ correlations: [Correlation], subject: String) async throws(HealthClientError)
        -> CorrelationInsertAck
    {
        try await send(CorrelationInsert(subject: subject, correlations: correlations))
    }

    /// HKCorrelationQuery: `subject`'s correlations matching `filter`, by start, with their anchors.
    public func correlations(subject: String, filter: CorrelationFilter = CorrelationFilter(), limit: UInt64 = 0)
        async throws(HealthClientError) -> CorrelationResult
    {
        try await send(CorrelationQuery(subject: subject, filter: filter, limit: limit))
    }

    /// Deletes correlations by UUID (their member samples stay); returns how many were deleted.
    public func deleteCorrelations(_ uuids: [UUID], subject: String) async throws(HealthClientError) -> UInt64 {
        try await send(CorrelationDelete(subject: subject, uuids: uuids)).deleted
    }
}
