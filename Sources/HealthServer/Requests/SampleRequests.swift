import HealthEngine
import HealthModel
import HealthWire

// Samples of one subject and type (HEALTHKIT.md §3–§8): writes need the share grant; deletes reach only the
// identity's own samples (admins: any); reads without the read grant see only the identity's own samples.

/// A read of one subject's samples of a type (samples, statistics, collections, changes): HealthKit's read rule,
/// declared once. Without the read grant the filter narrows to the identity's own samples.
protocol SampleRead: ServedRequest where Checked == TypedRequest<Self> {
    var subject: String { get }
    var filter: SampleFilter { get set }
}

extension SampleRead {
    static func authorize(_ request: TypedRequest<Self>, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<TypedRequest<Self>>
    {
        var narrowed = request
        narrowed.request.filter = try access.readFilter(
            request.request.filter, subject: request.request.subject, type: request.type)
        return .serve(narrowed)
    }
}

extension Insert: ServedRequest {

    static func authorize(_ request: TypedRequest<Insert>, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<TypedRequest<Insert>>
    {
        try access.checkShare(subject: request.request.batch.subject, type: request.type)
        return .serve(request)
    }

    static func serve(_ request: TypedRequest<Insert>, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let batch = request.request.batch
        let limits = dispatcher.limits
        guard batch.count <= Int(clamping: limits.maxBatchRows) else {
            throw HealthError(
                .batchTooLarge,
                "batch \(batch.batchID) has \(batch.count) rows; this server accepts at most \(limits.maxBatchRows)")
        }
        let result = try dispatcher.durable.insert(
            batch, writer: writer, encodedBatch: request.request.receivedBatchBytes)
        if result.inserted > 0 { dispatcher.subscriptions?.changed(subject: batch.subject, type: batch.typeIdentifier) }
        return [
            .insertAck(
                InsertAck(
                    batchID: batch.batchID, inserted: UInt64(result.inserted), duplicates: UInt64(result.duplicates)))
        ]
    }
}

extension Delete: ServedRequest {

    static func authorize(_ request: TypedRequest<Delete>, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<TypedRequest<Delete>>
    {
        var narrowed = request
        let m = request.request
        narrowed.request.selection = .filter(try access.deleteFilter(m.filter, subject: m.subject, type: request.type))
        return .serve(narrowed)
    }

    static func serve(_ request: TypedRequest<Delete>, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let m = request.request
        let deleted = try dispatcher.durable.delete(subject: m.subject, type: request.type, filter: m.filter)
        if deleted > 0 { dispatcher.subscriptions?.changed(subject: m.subject, type: request.type.identifier) }
        return [.deleteAck(DeleteAck(deleted: UInt64(deleted)))]
    }
}

extension SampleQuery: SampleRead {

    static func serve(_ request: TypedRequest<SampleQuery>, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let m = request.request
        let result = try dispatcher.store.samples(
            subject: m.subject, type: request.type, filter: m.filter, sort: m.sort, limit: Int(clamping: m.limit),
            after: try m.afterPosition(), unit: request.unit)
        return dispatcher.resultFrames(result, subject: m.subject)
    }
}

extension StatisticsQuery: SampleRead {

    static func serve(_ request: TypedRequest<StatisticsQuery>, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let m = request.request
        let statistics = try dispatcher.store.statistics(
            subject: m.subject, type: request.type, filter: m.filter, options: m.options, unit: request.unit)
        let unit = m.unit.isEmpty ? request.type.batchUnit : m.unit
        return [.statisticsResult(StatisticsResult(unit: unit, statistics: statistics))]
    }
}

extension CollectionQuery: SampleRead {

    static func serve(_ request: TypedRequest<CollectionQuery>, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let m = request.request
        let buckets = try dispatcher.store.collection(
            subject: m.subject, type: request.type, filter: m.filter, options: m.options, anchor: m.anchor,
            interval: m.interval, timeZone: m.timeZone, unit: request.unit, enumerateFrom: m.enumerateFrom,
            enumerateTo: m.enumerateTo)
        let unit = m.unit.isEmpty ? request.type.batchUnit : m.unit
        return dispatcher.collectionFrames(buckets, unit: unit)
    }
}
