import Foundation
import HealthCluster
import HealthEngine
import HealthModel
import HealthStorage

let watch = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch")

/// A batch of `rows` step samples of `subject` starting at minute `from`, with random UUIDs.
func stepBatch(id: UInt64, subject: String, from: Int = 0, rows: Int = 5) -> SampleBatch {
    var batch = SampleBatch(batchID: id, subject: subject, typeIdentifier: "stepCount", unit: "count")
    for i in from..<(from + rows) {
        let start = Int64(i) * Micros.minute
        batch.append(start: start, end: start + Micros.minute, value: Double(i % 7 + 1), source: watch, uuid: UUID())
    }
    return batch
}

/// How many step samples `store` holds for `subject`.
func stepCount(_ store: HealthStore, subject: String) throws -> Int {
    try store.samples(subject: subject, type: "stepCount").count
}

/// A node's view of a cluster on `url`: its change log owning `owned` partitions (all by default) after
/// rebuilding them into a fresh store, and the durable store over both; `leaseDeadline` as
/// ``JetStreamChangeLog`` takes it (none: appends without a deadline).
func openNode(
    url: String, partitions: Int = 4, owned: [Int]? = nil, replicas: Int = 1, wait: Duration = .seconds(5),
    anchorsFromSequences: Bool = false,
    leaseDeadline: (@Sendable (_ partition: Int) -> ContinuousClock.Instant?)? = nil
) throws -> (DurableStore, JetStreamChangeLog) {
    let jetStream = try JetStream(urls: url, wait: wait)
    let layout = try ClusterSetup.open(
        jetStream, partitions: partitions, replicas: ClusterReplicas(servers: replicas, requested: replicas))
    let log = JetStreamChangeLog(jetStream: jetStream, layout: layout, leaseDeadline: leaseDeadline)
    let store = HealthStore(anchorsFromSequences: anchorsFromSequences)
    for index in owned ?? Array(0..<layout.count) {
        log.own(index, after: 0)
        try log.catchUp(index, into: store)
    }
    return (DurableStore(store: store, changeLog: log, log: { _ in }), log)
}
