import Foundation
import HealthModel

/// The answer to ``HealthStore/changes(subject:type:filter:anchor:limit:unit:)``: what was added and deleted
/// after an anchor, in arrival order, and the anchor to ask from next.
public struct ChangeSet: Hashable, Sendable {
    /// Samples added after the anchor, in arrival order (not start order).
    public var added: SampleQueryResult
    /// Samples deleted after the anchor, in arrival order.
    public var deleted: [DeletedObject]
    /// Pass this to the next call: every change up to it has been returned.
    public var anchor: UInt64
    /// Whether more changes wait beyond the limit.
    public var hasMore: Bool

    /// A change set from its parts.
    public init(added: SampleQueryResult, deleted: [DeletedObject], anchor: UInt64, hasMore: Bool) {
        self.added = added
        self.deleted = deleted
        self.anchor = anchor
        self.hasMore = hasMore
    }

    /// Whether nothing was added or deleted.
    public var isEmpty: Bool { added.count == 0 && deleted.isEmpty }
}

/// The time spans changed after an anchor (for live collections), and the anchor they reach.
public struct ChangedSpans: Hashable, Sendable {
    /// `start...end` of every sample added or deleted after the anchor, sorted and merged where they overlap.
    public var spans: [ClosedRange<Timestamp>]
    /// Every change up to this anchor is covered.
    public var anchor: UInt64

    /// Spans from their parts.
    public init(spans: [ClosedRange<Timestamp>], anchor: UInt64) {
        self.spans = spans
        self.anchor = anchor
    }
}
