import HealthEngine
import HealthModel
import HealthStorage

/// Reads a partition's stream from a sequence on and applies its records to a store: a node rebuilding the
/// partitions it takes over, or catching up after a publish whose acknowledgement it did not get.
struct PartitionReplay {
    let jetStream: JetStream
    let layout: PartitionLayout

    /// Applies the records of partition `index` after stream sequence `after` through the stream's current end,
    /// but those of a store a loaded snapshot holds (`skipping`: each store's type and the sequence its image is
    /// complete up to); returns that end and how many records were applied. The records must follow one another
    /// from `after + 1`: a gap (records dropped because a newer snapshot covers them) throws the retryable
    /// ``ErrorCode/storageUnavailable``, and so does a message that is not one framed record of its own sequence
    /// (naming the stream and sequence), and so does a stream that says it ends before `after` (a server not
    /// current answered). A record that frames well but does not apply (it was published, then its change
    /// failed, or a confirmation: ``JetStreamChangeLog/confirmationKind``) is skipped, as start-up quarantines one.
    func run(_ index: Int, after: UInt64, skipping applied: [String: UInt64] = [:], into store: HealthStore) throws
        -> (last: UInt64, applied: Int)
    {
        let stream = layout.streamName(index)
        let end: UInt64
        do {
            end = try jetStream.streamState(stream).lastSequence
        } catch {
            throw error.healthError
        }
        guard end >= after else {
            // A server that is no longer current (a leader cut off and not yet unseated) answered for the stream.
            throw HealthError(
                .storageUnavailable,
                "stream \(stream) answered that it ends at sequence \(end), before sequence \(after) this node "
                    + "applied: a server not current answered; retry")
        }
        var replayed = 0
        do {
            var expected = after + 1
            try jetStream.read(stream, subject: layout.streamSubject(index), after: after, through: end) {
                sequence, bytes in
                guard sequence == expected else {
                    throw HealthError(
                        .storageUnavailable,
                        "stream \(stream) holds no record \(expected) any more (a newer snapshot covers it); retry")
                }
                expected += 1
                guard let record = LogReplay.record(bytes), record.sequence == sequence else {
                    throw HealthError(
                        .storageUnavailable,
                        "stream \(stream): message \(sequence) is not a log record of that sequence")
                }
                guard record.kind != JetStreamChangeLog.confirmationKind else { return }
                if (try? LogReplay.apply(record, to: store, skippingThrough: applied)) != nil { replayed += 1 }
            }
        } catch let failure as NATSFailure {
            throw failure.healthError
        }
        return (end, replayed)
    }
}
