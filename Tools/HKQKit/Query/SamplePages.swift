import Foundation
import HealthClient
import HealthModel

/// A listing of one type's samples in start order (either direction), read in pages of ``pageRows`` (4,096) so that
/// neither hkd nor hkq holds the whole listing: each page is a sample query whose date predicate starts (or,
/// newest first, ends) at the last start printed, skipping the samples already printed with that start.
///
/// A listing whose predicate cannot be narrowed that way is read in one query (``isPaged`` is false): sorted by
/// end, or newest first with `--strict-end` (HealthKit's strictEndDate bounds the end, and the narrowing bounds
/// the start). Until the cursor reaches a non-strict `--from`, samples starting
/// before it (those spanning it) are skipped by UUID from an unnarrowed query. Changes made while the pages are
/// read show as they would to queries made one after another.
struct SamplePages {
    /// Rows per page.
    var pageRows = 4_096

    let filter: SampleFilter
    let descending: Bool
    /// Whether the listing is read in pages; otherwise in one query.
    let isPaged: Bool
    /// At most this many samples in all; 0: no limit.
    let limit: Int

    /// The pages of the samples `filter` selects in `order`, at most `limit` (0: all).
    init(filter: SampleFilter, order: SampleOrder, limit: Int) {
        descending = order == .startDescending
        isPaged = order == .start || (descending && !(filter.date.end != nil && filter.date.strictEndDate))
        self.filter = filter
        self.limit = limit
    }

    /// The filter of the page after the samples starting at `cursor`: the samples `filter` selects that start at
    /// or after it (at or before, newest first); `nil` when the predicate cannot say so.
    func narrowed(at cursor: Timestamp) -> SampleFilter? {
        var narrowed = filter
        if descending {
            // start <= cursor is start < cursor + 1: a non-strict end bound (the sample starts before it).
            narrowed.date.end = min(filter.date.end ?? .max, cursor + 1)
            narrowed.date.strictEndDate = false
            return narrowed
        }
        if let start = filter.date.start, !filter.date.strictStartDate {
            // Not strict, the bound keeps samples ending at or after it; starting at or after cursor implies it
            // only once cursor has reached it.
            guard cursor >= start else { return nil }
        }
        narrowed.date.start = max(filter.date.start ?? cursor, cursor)
        narrowed.date.strictStartDate = true
        return narrowed
    }

    /// Calls `body` with each page in order (none for an empty listing); `query` runs one sample query (a
    /// filter and a row limit). Stops when the task is cancelled.
    func forEach(
        query: (SampleFilter, Int) async throws -> [Sample], _ body: ([Sample]) async throws -> Void
    ) async throws {
        guard isPaged else {
            let rows = try await query(filter, limit)
            return rows.isEmpty ? () : try await body(rows)
        }
        var cursor: Timestamp?
        /// Printed samples starting at `cursor`.
        var atCursor = Set<UUID>()
        /// Every printed sample while the page filter cannot be narrowed.
        var unnarrowed = Set<UUID>()
        var printed = 0
        while true {
            try Task.checkCancellation()
            let wanted = limit > 0 ? min(pageRows, limit - printed) : pageRows
            // nil: the page cannot be narrowed, so it is asked unnarrowed, skipping everything printed.
            let pageFilter: SampleFilter? = if let cursor { narrowed(at: cursor) } else { filter }
            let skip = pageFilter == nil ? unnarrowed : atCursor
            let asked = wanted + skip.count
            let rows = try await query(pageFilter ?? filter, asked)
            let page = Array(rows.lazy.filter { !skip.contains($0.uuid) }.prefix(wanted))
            for sample in page {
                if sample.start != cursor {
                    cursor = sample.start
                    atCursor.removeAll(keepingCapacity: true)
                }
                atCursor.insert(sample.uuid)
                if narrowed(at: sample.start) == nil {
                    unnarrowed.insert(sample.uuid)
                } else if !unnarrowed.isEmpty {
                    unnarrowed = []
                }
            }
            if !page.isEmpty { try await body(page) }
            printed += page.count
            if rows.count < asked || page.isEmpty || (limit > 0 && printed >= limit) { return }
        }
    }
}
