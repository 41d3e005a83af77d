import HealthModel
import HealthWire

/// One page of a sample query's answer: its samples, and the token of the next page.
public struct SamplePage: Sendable, Equatable {
    /// The page's samples, in the query's order, values in the unit asked for.
    public var samples: [Sample]
    /// The query's continuation when the limit left samples out: pass it as the next query's `after`. `nil` when
    /// no sample is left.
    public var next: PageToken?

    /// A page from its parts.
    public init(samples: [Sample], next: PageToken?) {
        self.samples = samples
        self.next = next
    }
}

extension HealthClient {
    /// HKSampleQuery, one page: at most `limit` matching samples (0: all) in the requested order, from the first
    /// or, with `after`, those after the page that token ended (Protocol/PROTOCOL.md, *Page tokens*). Pages are
    /// stable under concurrent writes: following the tokens gives every sample that existed when paging began
    /// (and was not deleted meanwhile) exactly once. A token of another sort order is ``ErrorCode/invalidArgument``.
    public func samplePage(
        _ type: String, subject: String, filter: SampleFilter = .all, sort: SampleSort = .startAscending,
        limit: Int, after: PageToken? = nil, unit: String = ""
    ) async throws(HealthClientError) -> SamplePage {
        let query = SampleQuery(
            subject: subject, type: type, filter: filter, sort: sort, limit: UInt64(max(0, limit)), unit: unit,
            after: after)
        let replies = try await sendStreamed(query)
        do {
            return SamplePage(samples: try replies.flatMap { try $0.batch.samples() }, next: replies.last?.next)
        } catch let error as HealthError {
            throw .local(error.code, error.message)
        } catch {
            throw .local(.internalError, "\(error)")
        }
    }

    /// ``samplePage(_:subject:filter:sort:limit:after:unit:)`` for a typed type and unit.
    public func samplePage(
        _ type: QuantityType, subject: String, filter: SampleFilter = .all, sort: SampleSort = .startAscending,
        limit: Int, after: PageToken? = nil, unit: HealthUnit? = nil
    ) async throws(HealthClientError) -> SamplePage {
        try await samplePage(
            type.identifier, subject: subject, filter: filter, sort: sort, limit: limit, after: after,
            unit: unit?.symbol ?? "")
    }

    /// Every page of a sample query in turn, `pageSize` samples each (the last may hold fewer), each fetched when
    /// the iteration asks for it; from the first sample or after `after`.
    public func samplePages(
        _ type: QuantityType, subject: String, filter: SampleFilter = .all, sort: SampleSort = .startAscending,
        pageSize: Int, after: PageToken? = nil, unit: HealthUnit? = nil
    ) -> SamplePages {
        SamplePages(
            client: self, type: type, subject: subject, filter: filter, sort: sort, pageSize: max(1, pageSize),
            after: after, unit: unit)
    }
}

/// The pages of a sample query, fetched one at a time as they are iterated (``HealthClient/samplePages``).
/// Iteration ends after the page without a next token; a failed fetch is thrown (retryable failures are
/// retried first, as for every request).
public struct SamplePages: AsyncSequence, Sendable {
    public typealias Element = SamplePage
    public typealias Failure = HealthClientError

    let client: HealthClient
    let type: QuantityType
    let subject: String
    let filter: SampleFilter
    let sort: SampleSort
    let pageSize: Int
    let after: PageToken?
    let unit: HealthUnit?

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pages: self, after: after) }

    /// Fetches the next page when asked.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let pages: SamplePages
        var after: PageToken?
        var finished = false

        init(pages: SamplePages, after: PageToken?) {
            self.pages = pages
            self.after = after
        }

        public mutating func next() async throws(HealthClientError) -> SamplePage? {
            guard !finished else { return nil }
            let page = try await pages.client.samplePage(
                pages.type, subject: pages.subject, filter: pages.filter, sort: pages.sort, limit: pages.pageSize,
                after: after, unit: pages.unit)
            after = page.next
            finished = page.next == nil
            return page
        }
    }
}
