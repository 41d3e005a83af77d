/// A row's place in a sample query's order: where one page of the answer ended and the next begins.
///
/// A sort orders rows by its key (the start, or the end), then by start, then by change anchor (arrival order,
/// which never changes), all reversed for the descending sorts; a position names one point of that order, so
/// it keeps its place whatever is inserted or deleted around it. The next page holds the rows strictly after
/// it. (On the wire, inside a page token: Protocol/PROTOCOL.md, *Page tokens*.)
public struct SamplePosition: Hashable, Sendable {
    /// The order the position belongs to.
    public var sort: SampleSort
    /// The row's sort key: its start for the start orders, its end for the end orders.
    public var key: Timestamp
    /// The row's start.
    public var start: Timestamp
    /// The row's change anchor.
    public var anchor: UInt64

    /// The position of a row ending a page of `sort`.
    public init(sort: SampleSort, key: Timestamp, start: Timestamp, anchor: UInt64) {
        self.sort = sort
        self.key = key
        self.start = start
        self.anchor = anchor
    }

    /// The position of the row with `start`, `end` and `anchor` in `sort`.
    public init(sort: SampleSort, start: Timestamp, end: Timestamp, anchor: UInt64) {
        let key = sort == .endAscending || sort == .endDescending ? end : start
        self.init(sort: sort, key: key, start: start, anchor: anchor)
    }

    /// Whether the position comes before a row with these fields in its order (the row belongs to the pages
    /// after it).
    public func isBefore(key rowKey: Timestamp, start rowStart: Timestamp, anchor rowAnchor: UInt64) -> Bool {
        let row = (rowKey, rowStart, rowAnchor)
        let here = (key, start, anchor)
        return sort.isDescending ? row < here : row > here
    }

    /// Throws ``ErrorCode/invalidArgument`` unless the position continues a query sorted by `sort`, and, for the
    /// start orders, its key is its start.
    public func check(continuing sort: SampleSort) throws {
        guard self.sort == sort else {
            throw HealthError(
                .invalidArgument,
                "the page token continues a query sorted by \(self.sort.name), not by \(sort.name); "
                    + "send it with the query it came from")
        }
        if !sort.sortsByEnd, key != start {
            throw HealthError(.invalidArgument, "the page token is not one this server wrote")
        }
    }
}

extension SampleSort {
    /// Whether the order is newest first.
    public var isDescending: Bool { self == .startDescending || self == .endDescending }

    /// Whether the order's key is the end.
    public var sortsByEnd: Bool { self == .endAscending || self == .endDescending }

    /// The order as hkq's `--sort` spells it: `start`, `-start`, `end`, `-end`.
    public var name: String {
        switch self {
        case .startAscending: "start"
        case .startDescending: "-start"
        case .endAscending: "end"
        case .endDescending: "-end"
        }
    }
}
