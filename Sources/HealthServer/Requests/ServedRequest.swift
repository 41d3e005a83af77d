import HealthEngine
import HealthModel
import HealthWire

/// A request kind as hkd serves it: who may make it and what answers it, declared together in one conformance
/// (this folder holds them, a file per area) beside the checks HealthWire's ``Request`` declares. ``Message/served`` lists every kind without a
/// `default`, so a new kind does not compile until it has a conformance, and with it an authorization rule.
///
/// The binary protocol's connections and any other front end reach a kind the same way: ``Message/prepared()``
/// at the edge, then ``RequestDispatcher/handle(_:identity:)`` on a worker.
protocol ServedRequest: Request {
    /// The request as `access` may make it (HEALTHKIT.md §10): served (narrowed to what the identity may read
    /// or delete), answered without the store, or refused with ``ErrorCode/forbidden``. Not asked with
    /// `hkd --auth off`.
    static func authorize(_ request: Checked, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<Checked>

    /// The reply: one or more messages, all but the last sent with ``FrameFlags/more``. Samples and objects it
    /// inserts are marked as written by `writer`.
    static func serve(_ request: Checked, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message]
}

/// What authorization made of a request.
enum Authorized<Request: Sendable>: Sendable {
    /// Serve it as given (possibly narrowed).
    case serve(Request)
    /// Answer with these messages; the store is not asked.
    case answered([Message])
}

/// A request checked at the edge, on its way to a worker: ``RequestDispatcher/handle(_:identity:)`` answers it.
/// Two are equal when their messages are.
public struct PreparedRequest: Sendable, Equatable {
    /// The request as received.
    public let message: Message
    /// Authorizes (with `access`; `nil`: `hkd --auth off`) and serves the checked request.
    let reply: @Sendable (_ dispatcher: RequestDispatcher, _ access: IdentityAccess?) throws -> [Message]

    public static func == (lhs: PreparedRequest, rhs: PreparedRequest) -> Bool { lhs.message == rhs.message }
}

extension ServedRequest {
    /// This request (which `message` wraps) checked, ready for ``RequestDispatcher/handle(_:identity:)``.
    func prepared(as message: Message) throws -> PreparedRequest {
        let checked = try checked()
        return PreparedRequest(message: message) { dispatcher, access in
            guard let access else { return try Self.serve(checked, dispatcher: dispatcher, writer: 0) }
            switch try Self.authorize(checked, access: access, dispatcher: dispatcher) {
            case .serve(let authorized): return try Self.serve(authorized, dispatcher: dispatcher, writer: access.id)
            case .answered(let replies): return replies
            }
        }
    }
}

extension Message {
    /// The request this message is, checked; `nil` for replies and handshake messages, which clients may not
    /// send once connected. Throws the ``HealthError`` a malformed request deserves.
    func prepared() throws -> PreparedRequest? {
        try served?.prepared(as: self)
    }

    /// Every request kind with its conformance; `nil` for the rest. No `default`: a new kind must be listed.
    var served: (any ServedRequest)? {
        switch self {
        case .ping(let m): m
        case .insert(let m): m
        case .delete(let m): m
        case .sampleQuery(let m): m
        case .statisticsQuery(let m): m
        case .collectionQuery(let m): m
        case .changesQuery(let m): m
        case .subscribe(let m): m
        case .unsubscribe(let m): m
        case .getSourcePriority(let m): m
        case .setSourcePriority(let m): m
        case .authorizationStatusQuery(let m): m
        case .serverInfoQuery(let m): m
        case .clusterStatusQuery(let m): m
        case .adminRequest(let m): m
        case .backupRequest(let m): m
        case .workoutInsert(let m): m
        case .workoutQuery(let m): m
        case .workoutDelete(let m): m
        case .characteristicsSet(let m): m
        case .characteristicsQuery(let m): m
        case .activitySummaryInsert(let m): m
        case .activitySummaryQuery(let m): m
        case .correlationInsert(let m): m
        case .correlationQuery(let m): m
        case .correlationDelete(let m): m
        case .routeInsert(let m): m
        case .routeQuery(let m): m
        case .hello, .challenge, .proof, .welcome, .error, .pong, .insertAck, .deleteAck, .sampleResult,
            .statisticsResult, .collectionResult, .changesResult, .subscribed, .unsubscribed, .update,
            .sourcePriority, .authorizationStatus, .serverInfo, .clusterStatus, .adminResult, .backupResult,
            .workoutInsertAck, .workoutResult, .characteristicsResult, .activitySummaryInsertAck,
            .activitySummaryResult, .correlationInsertAck, .correlationResult, .routeInsertAck, .routeResult:
            nil
        }
    }
}
