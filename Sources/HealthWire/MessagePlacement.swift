extension Message {
    /// The subject whose partition must serve this request in cluster mode: the subject of a change, of a query
    /// of one subject or of a subscription; `nil` for requests about no subject or every subject (handshake,
    /// server info, authorization status, administration, backups, cluster status), which any node answers. The
    /// server checks it against the partitions it owns; HealthClient routes by it.
    public var placedSubject: String? {
        switch self {
        case .insert(let m): m.batch.subject
        case .delete(let m): m.subject
        case .sampleQuery(let m): m.subject
        case .statisticsQuery(let m): m.subject
        case .collectionQuery(let m): m.subject
        case .changesQuery(let m): m.subject
        case .subscribe(let m): m.request.subject
        case .getSourcePriority(let m): m.subject
        case .setSourcePriority(let m): m.subject
        case .workoutInsert(let m): m.subject
        case .workoutQuery(let m): m.subject
        case .workoutDelete(let m): m.subject
        case .characteristicsSet(let m): m.subject
        case .characteristicsQuery(let m): m.subject
        case .activitySummaryInsert(let m): m.subject
        case .activitySummaryQuery(let m): m.subject
        case .correlationInsert(let m): m.subject
        case .correlationQuery(let m): m.subject
        case .correlationDelete(let m): m.subject
        case .routeInsert(let m): m.subject
        case .routeQuery(let m): m.subject
        default: nil
        }
    }
}

extension SubscriptionRequest {
    /// The one subject the subscription watches.
    public var subject: String {
        switch self {
        case .observer(let subject, _, _): subject
        case .anchored(let query): query.subject
        case .collection(let query): query.subject
        }
    }
}
