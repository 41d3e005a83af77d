import HealthModel

/// The `--sort` values of `samples`: `start`, `-start`, `end`, `-end` (a leading `-` means newest first).
public enum SampleOrder: String, Sendable, CaseIterable {
    /// Oldest start first.
    case start
    /// Newest start first.
    case startDescending = "-start"
    /// Earliest end first.
    case end
    /// Latest end first.
    case endDescending = "-end"

    /// The server's sort order.
    public var sort: SampleSort {
        switch self {
        case .start: .startAscending
        case .startDescending: .startDescending
        case .end: .endAscending
        case .endDescending: .endDescending
        }
    }

    /// Whether `a` comes before `b` in this order (ties are not ordered).
    public func precedes(_ a: Sample, _ b: Sample) -> Bool {
        switch self {
        case .start: a.start < b.start
        case .startDescending: a.start > b.start
        case .end: a.end < b.end
        case .endDescending: a.end > b.end
        }
    }

    /// The samples of several queries, each already in this order, merged into one list in this order; ties
    /// keep the lists' order and each list's own order.
    public func merge(_ lists: [[Sample]]) -> [Sample] {
        var tagged: [(list: Int, position: Int, sample: Sample)] = []
        for (list, samples) in lists.enumerated() {
            for (position, sample) in samples.enumerated() { tagged.append((list, position, sample)) }
        }
        tagged.sort { a, b in
            if precedes(a.sample, b.sample) { return true }
            if precedes(b.sample, a.sample) { return false }
            return (a.list, a.position) < (b.list, b.position)
        }
        return tagged.map(\.sample)
    }
}
