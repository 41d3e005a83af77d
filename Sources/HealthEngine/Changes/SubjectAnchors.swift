/// Anchors derived from log sequences (cluster mode, ``HealthStore/init(anchorsFromSequences:)``): a change
/// logged at stream sequence `s` numbers its anchors from `s << 32`, so every node that applies a partition's
/// stream hands out the same anchors. Kept per subject: the newest anchor of each.
struct SubjectAnchors: Sendable {
    private var newest: [String: UInt64] = [:]

    /// The newest anchor of `subject`'s changes (0 before any).
    func last(of subject: String) -> UInt64 { newest[subject] ?? 0 }

    /// Forgets the subjects `subjects` accepts and takes `newest` (subject: its newest anchor) instead: the
    /// anchors of a restored image (a cluster partition's subjects, or every subject).
    mutating func replace(_ newest: [String: UInt64], where subjects: (String) -> Bool) {
        self.newest = self.newest.filter { !subjects($0.key) }.merging(newest.filter { $0.value > 0 }) { _, new in new }
    }

    /// The newest anchor of any subject (which orders nothing across subjects).
    var newestOfAll: UInt64? { newest.values.max() }

    /// Runs `body`, a change of `subject` logged at `sequence`, on `state` with its anchor counter (`counter`)
    /// set to where the change's anchors start: `sequence << 32`, or without a sequence after the subject's
    /// newest; the subject's newest anchor follows the counter afterwards. With no subject anchors in `state`
    /// (anchors from the counter alone), just runs `body`.
    static func change<State, R>(
        of subject: String, sequence: UInt64?, in state: inout State,
        anchors: WritableKeyPath<State, SubjectAnchors?>, counter: WritableKeyPath<State, UInt64>,
        _ body: (inout State) throws -> R
    ) rethrows -> R {
        guard let known = state[keyPath: anchors]?.last(of: subject) else { return try body(&state) }
        let base = sequence.map { $0 << 32 } ?? known
        state[keyPath: counter] = base
        let result = try body(&state)
        let last = state[keyPath: counter]
        if last > base { state[keyPath: anchors]?.newest[subject] = max(known, last) }
        return result
    }
}
