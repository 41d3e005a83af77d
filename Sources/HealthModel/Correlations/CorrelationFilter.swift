import Foundation

/// Which correlations a query wants (HEALTHKIT.md §13).
public struct CorrelationFilter: Hashable, Sendable {
    /// Correlation types; empty matches both.
    public var types: Set<CorrelationType>
    /// Correlations starting at or after `start` (inclusive) and before `end` (exclusive); `nil` leaves the side
    /// open.
    public var start: Timestamp?
    public var end: Timestamp?
    /// `nil` matches every UUID.
    public var uuids: Set<UUID>?
    /// Only correlations (and deletions) with a larger anchor: changes since an anchor. 0: everything.
    public var afterAnchor: UInt64
    /// Only correlations written by this identity (the read rule; set by the server's authorization).
    public var writer: UInt32?

    /// A filter; every correlation by default.
    public init(
        types: Set<CorrelationType> = [], start: Timestamp? = nil, end: Timestamp? = nil, uuids: Set<UUID>? = nil,
        afterAnchor: UInt64 = 0, writer: UInt32? = nil
    ) {
        self.types = types
        self.start = start
        self.end = end
        self.uuids = uuids
        self.afterAnchor = afterAnchor
        self.writer = writer
    }

    /// Whether `correlation`, stored with `anchor` by `writer`, passes.
    public func matches(_ correlation: Correlation, anchor: UInt64, writer: UInt32) -> Bool {
        if !types.isEmpty, !types.contains(correlation.type) { return false }
        return ObjectSelection.matches(
            start: start, end: end, uuids: uuids, afterAnchor: afterAnchor, writer: self.writer,
            objectStart: correlation.start, uuid: correlation.uuid, anchor: anchor, objectWriter: writer)
    }
}

extension CorrelationFilter: CustomReflectable {
    /// The fields with the sets sorted, so a printed filter (the golden vectors) does not depend on their order.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "types": types.map(\.rawValue).sorted(), "start": start as Any, "end": end as Any,
                "uuids": uuids.map { $0.sorted { $0.uuidString < $1.uuidString } } as Any,
                "afterAnchor": afterAnchor, "writer": writer as Any,
            ], displayStyle: .struct)
    }
}
