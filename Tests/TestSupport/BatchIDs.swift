import Synchronization

private let lastBatchID = Atomic<UInt64>(0)

/// A batch id no other call in this test process returned (1, 2, 3, …): identity without randomness, so runs
/// repeat exactly.
public func uniqueBatchID() -> UInt64 {
    lastBatchID.add(1, ordering: .relaxed).newValue
}
