import HealthModel
import HealthWire

/// An anchored query's answer as HealthKit's `HKAnchoredObjectQuery` hands it over: the samples added since the
/// anchor, the objects deleted, and the anchor to pass next time.
///
/// ``HealthWire/ChangesResult`` carries the same answer as it travels, the added samples in one columnar
/// ``HealthModel/SampleBatch``; this is its sample view.
public struct AnchoredSamples: Sendable, Equatable {
    /// The samples added after the anchor, in arrival order, each with its UUID, values in the unit asked for.
    public var added: [Sample]
    /// The samples deleted after the anchor (HealthKit's `HKDeletedObject`s).
    public var deleted: [DeletedObject]
    /// Pass this anchor to the next query to get only later changes.
    public var anchor: UInt64
    /// Whether more changes wait beyond the limit: query again from ``anchor``.
    public var hasMore: Bool

    /// The sample view of `result`. Throws a local ``HealthClientError`` when its batch names a type or unit
    /// this client does not know (a server newer than the client).
    public init(_ result: ChangesResult) throws(HealthClientError) {
        do {
            added = result.added.count == 0 ? [] : try result.added.samples()
        } catch let error as HealthError {
            throw .local(error.code, error.message)
        } catch {
            throw .local(.internalError, "\(error)")
        }
        deleted = result.deleted
        anchor = result.anchor
        hasMore = result.hasMore
    }

    /// A view from its parts.
    public init(added: [Sample], deleted: [DeletedObject], anchor: UInt64, hasMore: Bool) {
        self.added = added
        self.deleted = deleted
        self.anchor = anchor
        self.hasMore = hasMore
    }
}

extension HealthClient {
    /// HKAnchoredObjectQuery with samples: what `changes` answers, the added samples as ``Sample`` values
    /// (``AnchoredSamples``). `anchor` 0 starts from the
    /// beginning; at most `limit` changes together (0: the server's page); continue from the result's anchor while
    /// `hasMore`.
    public func anchoredSamples(
        _ type: QuantityType, subject: String, filter: SampleFilter = .all, since anchor: UInt64 = 0,
        limit: UInt64 = 0, unit: HealthUnit? = nil
    ) async throws(HealthClientError) -> AnchoredSamples {
        try AnchoredSamples(
            await changes(
                type.identifier, subject: subject, filter: filter, since: anchor, limit: limit,
                unit: unit?.symbol ?? ""))
    }
}
