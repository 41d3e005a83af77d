extension Message {
    /// The subject whose partition must serve this request in cluster mode: the subject of a change or of a
    /// query of one subject; `nil` for requests about no subject or every subject (handshake, server info,
    /// administration, backups, subscriptions), which any node answers from what it holds. The server checks
    /// it against the partitions it owns; HealthClient routes by it.
    public var placedSubject: String? {
        switch self {
        case .insert(let m): m.batch.subject
        case .delete(let m): m.subject
        case .sampleQuery(let m): m.subject
        case .statisticsQuery(let m): m.subject
        case .collectionQuery(let m): m.subject
        case .changesQuery(let m): m.subject
        case .getSourcePriority(let m): m.subject
        case .setSourcePriority(let m): m.subject
        case .workoutInsert(let m): m.subject
        case .workoutQuery(let m): m.subject
        case .workoutDelete(let m): m.subject
        default: nil
        }
    }
}
