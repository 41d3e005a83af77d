import HealthModel

// Every request kind of the protocol: the message that answers it, the subject it is placed by in cluster mode,
// and its checks. Replies and handshake messages are not requests.

/// A request naming one subject's samples of a type, with the type resolved and the unit parsed.
public struct TypedRequest<Wire: Sendable>: Sendable {
    /// The request as received, its filter's bounds in the type's canonical unit.
    public var request: Wire
    public let type: QuantityType
    /// `nil`: the type's canonical unit.
    public let unit: HealthUnit?

    /// `request` about `subject`'s samples of the type named `typeName`, in `unit` (empty: the canonical unit).
    /// Throws for an invalid subject, an unknown type, a unit that does not parse or fit.
    init(_ request: Wire, subject: String, typeName: String, unit: String = "") throws {
        try SampleRules.validate(subject: subject)
        self.request = request
        type = try QuantityType.named(typeName)
        self.unit = unit.isEmpty ? nil : try type.unit(parsing: unit)
    }
}

/// The checks of a request whose fields are already its typed form: the subject is valid and so is each item.
private func checkedSubject<R>(_ request: R, _ subject: String, items: () throws -> Void = {}) throws -> R {
    try SampleRules.validate(subject: subject)
    try items()
    return request
}

// MARK: Session

extension Ping: Request {
    public typealias Reply = Pong
    public var placedSubject: String? { nil }
    public func checked() -> Ping { self }
}

// MARK: Samples

extension Insert: Request {
    public typealias Reply = InsertAck
    public var placedSubject: String? { batch.subject }

    /// A batch of a known type in a unit that fits it, well shaped, a category batch's values in its type's
    /// enumeration. The other row-level rules are the engine's.
    public func checked() throws -> TypedRequest<Insert> {
        let typed = try TypedRequest(self, subject: batch.subject, typeName: batch.typeIdentifier)
        _ = try typed.type.unit(parsing: batch.unit)
        try batch.validateShape()
        if typed.type.isCategory {
            for (row, value) in batch.values.enumerated() {
                do {
                    try SampleRules.validate(categoryValue: value, type: typed.type)
                } catch let error as HealthError {
                    throw HealthError(error.code, "batch \(batch.batchID) row \(row): \(error.message)")
                }
            }
        }
        return typed
    }
}

extension Delete: Request {
    public typealias Reply = DeleteAck
    public var placedSubject: String? { subject }

    public func checked() throws -> TypedRequest<Delete> {
        var typed = try TypedRequest(self, subject: subject, typeName: type)
        if case .filter(let filter) = selection {
            typed.request.selection = .filter(try filter.validated(for: typed.type))
        }
        return typed
    }

    /// The samples the request selects, as a filter.
    public var filter: SampleFilter {
        switch selection {
        case .uuids(let uuids): SampleFilter(uuids: Set(uuids))
        case .filter(let filter): filter
        }
    }
}

extension SampleQuery: StreamedRequest {
    public typealias Reply = SampleResult
    public var placedSubject: String? { subject }

    /// A known type, unit and filter, and a page token (if any) of this query's sort order.
    public func checked() throws -> TypedRequest<SampleQuery> {
        var typed = try TypedRequest(self, subject: subject, typeName: type, unit: unit)
        typed.request.filter = try filter.validated(for: typed.type)
        _ = try afterPosition()
        return typed
    }

    /// The position ``after`` names, checked against the query's sort; `nil` from the first row. Throws
    /// ``ErrorCode/invalidArgument`` for a malformed token or one of another sort.
    public func afterPosition() throws -> SamplePosition? {
        guard let after else { return nil }
        let position = try after.position()
        try position.check(continuing: sort)
        return position
    }
}

extension StatisticsQuery: Request {
    public typealias Reply = StatisticsResult
    public var placedSubject: String? { subject }

    public func checked() throws -> TypedRequest<StatisticsQuery> {
        var typed = try TypedRequest(self, subject: subject, typeName: type, unit: unit)
        typed.request.filter = try filter.validated(for: typed.type)
        try options.validate(for: typed.type)
        return typed
    }
}

extension CollectionQuery: StreamedRequest {
    public typealias Reply = CollectionResult
    public var placedSubject: String? { subject }

    public func checked() throws -> TypedRequest<CollectionQuery> {
        var typed = try TypedRequest(self, subject: subject, typeName: type, unit: unit)
        typed.request.filter = try filter.validated(for: typed.type)
        try options.validate(for: typed.type)
        try interval.validate()
        if timeZone.isEmpty {
            throw HealthError(.invalidTimeZone, "the time zone is empty (send an IANA id such as Europe/Berlin)")
        }
        if let from = enumerateFrom, let to = enumerateTo, to < from {
            throw HealthError(.invalidPredicate, "the enumeration ends (\(to)) before it starts (\(from))")
        }
        return typed
    }
}

extension GetSourcePriority: Request {
    public typealias Reply = SourcePriority
    public var placedSubject: String? { subject }
    public func checked() throws -> TypedRequest<GetSourcePriority> {
        try TypedRequest(self, subject: subject, typeName: type)
    }
}

extension SetSourcePriority: Request {
    public typealias Reply = SourcePriority
    public var placedSubject: String? { subject }
    public func checked() throws -> TypedRequest<SetSourcePriority> {
        try TypedRequest(self, subject: subject, typeName: type)
    }
}

// MARK: Changes

extension ChangesQuery: Request {
    public typealias Reply = ChangesResult
    public var placedSubject: String? { subject }

    public func checked() throws -> TypedRequest<ChangesQuery> {
        var typed = try TypedRequest(self, subject: subject, typeName: type, unit: unit)
        typed.request.filter = try filter.validated(for: typed.type)
        return typed
    }
}

extension Subscribe: Request {
    public typealias Reply = Subscribed
    public var placedSubject: String? { request.subject }

    /// The query it wraps checked as that query is.
    public func checked() throws -> Subscribe {
        switch request {
        case .observer(let subject, let type, let filter):
            let typed = try TypedRequest(self, subject: subject, typeName: type)
            _ = try filter.validated(for: typed.type)
        case .anchored(let query): _ = try query.checked()
        case .collection(let query): _ = try query.checked()
        }
        return self
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

extension Unsubscribe: Request {
    public typealias Reply = Unsubscribed
    public var placedSubject: String? { nil }
    public func checked() -> Unsubscribe { self }
}

// MARK: The server

extension AuthorizationStatusQuery: Request {
    public typealias Reply = AuthorizationStatus
    public var placedSubject: String? { nil }
    public func checked() -> AuthorizationStatusQuery { self }
}

extension ServerInfoQuery: Request {
    public typealias Reply = ServerInfo
    public var placedSubject: String? { nil }
    public func checked() -> ServerInfoQuery { self }
}

extension ClusterStatusQuery: Request {
    public typealias Reply = ClusterStatus
    public var placedSubject: String? { nil }
    public func checked() -> ClusterStatusQuery { self }
}

extension AdminRequest: Request {
    public typealias Reply = AdminResult
    public var placedSubject: String? { nil }
    public func checked() -> AdminRequest { self }
}

extension BackupRequest: Request {
    public typealias Reply = BackupResult
    public var placedSubject: String? { nil }
    public func checked() -> BackupRequest { self }
}

// MARK: Workouts, profile, correlations, routes

extension WorkoutInsert: Request {
    public typealias Reply = WorkoutInsertAck
    public var placedSubject: String? { subject }
    public func checked() throws -> WorkoutInsert {
        try checkedSubject(self, subject) { for workout in workouts { try workout.validate() } }
    }
}

extension WorkoutQuery: Request {
    public typealias Reply = WorkoutResult
    public var placedSubject: String? { subject }
    public func checked() throws -> WorkoutQuery { try checkedSubject(self, subject) }
}

extension WorkoutDelete: Request {
    public typealias Reply = DeleteAck
    public var placedSubject: String? { subject }
    public func checked() throws -> WorkoutDelete { try checkedSubject(self, subject) }
}

extension CharacteristicsSet: Request {
    public typealias Reply = CharacteristicsResult
    public var placedSubject: String? { subject }
    public func checked() throws -> CharacteristicsSet {
        try checkedSubject(self, subject) { for entry in entries { _ = try entry.validated() } }
    }
}

extension CharacteristicsQuery: Request {
    public typealias Reply = CharacteristicsResult
    public var placedSubject: String? { subject }
    public func checked() throws -> CharacteristicsQuery { try checkedSubject(self, subject) }
}

extension ActivitySummaryInsert: Request {
    public typealias Reply = ActivitySummaryInsertAck
    public var placedSubject: String? { subject }
    public func checked() throws -> ActivitySummaryInsert {
        try checkedSubject(self, subject) { for summary in summaries { try summary.validate() } }
    }
}

extension ActivitySummaryQuery: Request {
    public typealias Reply = ActivitySummaryResult
    public var placedSubject: String? { subject }
    public func checked() throws -> ActivitySummaryQuery { try checkedSubject(self, subject) }
}

extension CorrelationInsert: Request {
    public typealias Reply = CorrelationInsertAck
    public var placedSubject: String? { subject }
    public func checked() throws -> CorrelationInsert {
        try checkedSubject(self, subject) { for correlation in correlations { try correlation.validate() } }
    }
}

extension CorrelationQuery: Request {
    public typealias Reply = CorrelationResult
    public var placedSubject: String? { subject }
    public func checked() throws -> CorrelationQuery { try checkedSubject(self, subject) }
}

extension CorrelationDelete: Request {
    public typealias Reply = DeleteAck
    public var placedSubject: String? { subject }
    public func checked() throws -> CorrelationDelete { try checkedSubject(self, subject) }
}

extension RouteInsert: Request {
    public typealias Reply = RouteInsertAck
    public var placedSubject: String? { subject }
    public func checked() throws -> RouteInsert {
        try checkedSubject(self, subject) { for route in routes { try route.validate() } }
    }
}

extension RouteQuery: Request {
    public typealias Reply = RouteResult
    public var placedSubject: String? { subject }
    public func checked() throws -> RouteQuery { try checkedSubject(self, subject) }
}
