import HealthCodec
import HealthModel

// The registry of the protocol's messages. A new kind is added here (besides its type's definition): its byte in
// `MessageKind`, its case in `Message`, its line in `registration`, in `body` and in `request`; a request's
// conformance goes in Requests.swift. The switches are exhaustive, without `default`: the compiler asks for their
// lines once the kind and the case exist. (`body` is a switch, not a mirror: a mirror costs microseconds a frame.)

/// The one-byte message kind in every frame header. Values are part of the protocol (Protocol/PROTOCOL.md).
public enum MessageKind: UInt8, Sendable, CaseIterable {
    case hello = 0x01
    case welcome = 0x02
    case error = 0x03
    case ping = 0x04
    case pong = 0x05
    case challenge = 0x06
    case proof = 0x07

    case insert = 0x10
    case insertAck = 0x11
    case delete = 0x12
    case deleteAck = 0x13

    case sampleQuery = 0x20
    case sampleResult = 0x21
    case statisticsQuery = 0x22
    case statisticsResult = 0x23
    case collectionQuery = 0x24
    case collectionResult = 0x25
    case changesQuery = 0x26
    case changesResult = 0x27

    case subscribe = 0x30
    case subscribed = 0x31
    case unsubscribe = 0x32
    case unsubscribed = 0x33
    case update = 0x34

    case getSourcePriority = 0x40
    case sourcePriority = 0x41
    case setSourcePriority = 0x42

    case authorizationStatusQuery = 0x50
    case authorizationStatus = 0x51

    case serverInfoQuery = 0x60
    case serverInfo = 0x61

    case adminRequest = 0x70
    case adminResult = 0x71
    case backupRequest = 0x72
    case backupResult = 0x73

    case workoutInsert = 0x80
    case workoutInsertAck = 0x81
    case workoutQuery = 0x82
    case workoutResult = 0x83
    case workoutDelete = 0x84

    case characteristicsSet = 0x85
    case characteristicsQuery = 0x86
    case characteristicsResult = 0x87
    case activitySummaryInsert = 0x88
    case activitySummaryInsertAck = 0x89
    case activitySummaryQuery = 0x8A
    case activitySummaryResult = 0x8B
    case correlationInsert = 0x90
    case correlationInsertAck = 0x91
    case correlationQuery = 0x92
    case correlationResult = 0x93
    case correlationDelete = 0x94
    case routeInsert = 0x95
    case routeInsertAck = 0x96
    case routeQuery = 0x97
    case routeResult = 0x98
    // Declared last, so that the kinds above keep their places in `allCases` (the fuzz seeds index it).
    case clusterStatusQuery = 0x64
    case clusterStatus = 0x65

    /// The lowerCamel name the spec uses, e.g. `insertAck` (interpolating a kind prints the same).
    public var name: String { String(describing: self) }
}

/// Every message of the protocol, typed: the form the server's dispatcher and the tests pattern-match.
/// ``Message/decode(_:limits:)`` turns a ``Frame`` into one, ``Message/frame(requestID:flags:)`` back.
public enum Message: Hashable, Sendable {
    case hello(Hello)
    case challenge(Challenge)
    case proof(Proof)
    case welcome(Welcome)
    case error(ErrorReply)
    case ping(Ping)
    case pong(Pong)
    case insert(Insert)
    case insertAck(InsertAck)
    case delete(Delete)
    case deleteAck(DeleteAck)
    case sampleQuery(SampleQuery)
    case sampleResult(SampleResult)
    case statisticsQuery(StatisticsQuery)
    case statisticsResult(StatisticsResult)
    case collectionQuery(CollectionQuery)
    case collectionResult(CollectionResult)
    case changesQuery(ChangesQuery)
    case changesResult(ChangesResult)
    case subscribe(Subscribe)
    case subscribed(Subscribed)
    case unsubscribe(Unsubscribe)
    case unsubscribed(Unsubscribed)
    case update(Update)
    case getSourcePriority(GetSourcePriority)
    case sourcePriority(SourcePriority)
    case setSourcePriority(SetSourcePriority)
    case authorizationStatusQuery(AuthorizationStatusQuery)
    case authorizationStatus(AuthorizationStatus)
    case serverInfoQuery(ServerInfoQuery)
    case serverInfo(ServerInfo)
    case clusterStatusQuery(ClusterStatusQuery)
    case clusterStatus(ClusterStatus)
    case adminRequest(AdminRequest)
    case adminResult(AdminResult)
    case backupRequest(BackupRequest)
    case backupResult(BackupResult)
    case workoutInsert(WorkoutInsert)
    case workoutInsertAck(WorkoutInsertAck)
    case workoutQuery(WorkoutQuery)
    case workoutResult(WorkoutResult)
    case workoutDelete(WorkoutDelete)
    case characteristicsSet(CharacteristicsSet)
    case characteristicsQuery(CharacteristicsQuery)
    case characteristicsResult(CharacteristicsResult)
    case activitySummaryInsert(ActivitySummaryInsert)
    case activitySummaryInsertAck(ActivitySummaryInsertAck)
    case activitySummaryQuery(ActivitySummaryQuery)
    case activitySummaryResult(ActivitySummaryResult)
    case correlationInsert(CorrelationInsert)
    case correlationInsertAck(CorrelationInsertAck)
    case correlationQuery(CorrelationQuery)
    case correlationResult(CorrelationResult)
    case correlationDelete(CorrelationDelete)
    case routeInsert(RouteInsert)
    case routeInsertAck(RouteInsertAck)
    case routeQuery(RouteQuery)
    case routeResult(RouteResult)
}

extension MessageKind {
    /// The kind's entry: its type (inferred from the `Message` case that carries it), which is a request when it
    /// conforms to ``Request``.
    var registration: MessageRegistration {
        switch self {
        case .hello: MessageRegistration(Message.hello)
        case .challenge: MessageRegistration(Message.challenge)
        case .proof: MessageRegistration(Message.proof)
        case .welcome: MessageRegistration(Message.welcome)
        case .error: MessageRegistration(Message.error)
        case .ping: MessageRegistration(Message.ping)
        case .pong: MessageRegistration(Message.pong)
        case .insert: MessageRegistration(Message.insert)
        case .insertAck: MessageRegistration(Message.insertAck)
        case .delete: MessageRegistration(Message.delete)
        case .deleteAck: MessageRegistration(Message.deleteAck)
        case .sampleQuery: MessageRegistration(Message.sampleQuery)
        case .sampleResult: MessageRegistration(Message.sampleResult)
        case .statisticsQuery: MessageRegistration(Message.statisticsQuery)
        case .statisticsResult: MessageRegistration(Message.statisticsResult)
        case .collectionQuery: MessageRegistration(Message.collectionQuery)
        case .collectionResult: MessageRegistration(Message.collectionResult)
        case .changesQuery: MessageRegistration(Message.changesQuery)
        case .changesResult: MessageRegistration(Message.changesResult)
        case .subscribe: MessageRegistration(Message.subscribe)
        case .subscribed: MessageRegistration(Message.subscribed)
        case .unsubscribe: MessageRegistration(Message.unsubscribe)
        case .unsubscribed: MessageRegistration(Message.unsubscribed)
        case .update: MessageRegistration(Message.update)
        case .getSourcePriority: MessageRegistration(Message.getSourcePriority)
        case .sourcePriority: MessageRegistration(Message.sourcePriority)
        case .setSourcePriority: MessageRegistration(Message.setSourcePriority)
        case .authorizationStatusQuery: MessageRegistration(Message.authorizationStatusQuery)
        case .authorizationStatus: MessageRegistration(Message.authorizationStatus)
        case .serverInfoQuery: MessageRegistration(Message.serverInfoQuery)
        case .serverInfo: MessageRegistration(Message.serverInfo)
        case .clusterStatusQuery: MessageRegistration(Message.clusterStatusQuery)
        case .clusterStatus: MessageRegistration(Message.clusterStatus)
        case .adminRequest: MessageRegistration(Message.adminRequest)
        case .adminResult: MessageRegistration(Message.adminResult)
        case .backupRequest: MessageRegistration(Message.backupRequest)
        case .backupResult: MessageRegistration(Message.backupResult)
        case .workoutInsert: MessageRegistration(Message.workoutInsert)
        case .workoutInsertAck: MessageRegistration(Message.workoutInsertAck)
        case .workoutQuery: MessageRegistration(Message.workoutQuery)
        case .workoutResult: MessageRegistration(Message.workoutResult)
        case .workoutDelete: MessageRegistration(Message.workoutDelete)
        case .characteristicsSet: MessageRegistration(Message.characteristicsSet)
        case .characteristicsQuery: MessageRegistration(Message.characteristicsQuery)
        case .characteristicsResult: MessageRegistration(Message.characteristicsResult)
        case .activitySummaryInsert: MessageRegistration(Message.activitySummaryInsert)
        case .activitySummaryInsertAck: MessageRegistration(Message.activitySummaryInsertAck)
        case .activitySummaryQuery: MessageRegistration(Message.activitySummaryQuery)
        case .activitySummaryResult: MessageRegistration(Message.activitySummaryResult)
        case .correlationInsert: MessageRegistration(Message.correlationInsert)
        case .correlationInsertAck: MessageRegistration(Message.correlationInsertAck)
        case .correlationQuery: MessageRegistration(Message.correlationQuery)
        case .correlationResult: MessageRegistration(Message.correlationResult)
        case .correlationDelete: MessageRegistration(Message.correlationDelete)
        case .routeInsert: MessageRegistration(Message.routeInsert)
        case .routeInsertAck: MessageRegistration(Message.routeInsertAck)
        case .routeQuery: MessageRegistration(Message.routeQuery)
        case .routeResult: MessageRegistration(Message.routeResult)
        }
    }
}

extension Message {
    /// The wrapped typed message.
    public var body: any WireMessage {
        switch self {
        case .hello(let m): m
        case .challenge(let m): m
        case .proof(let m): m
        case .welcome(let m): m
        case .error(let m): m
        case .ping(let m): m
        case .pong(let m): m
        case .insert(let m): m
        case .insertAck(let m): m
        case .delete(let m): m
        case .deleteAck(let m): m
        case .sampleQuery(let m): m
        case .sampleResult(let m): m
        case .statisticsQuery(let m): m
        case .statisticsResult(let m): m
        case .collectionQuery(let m): m
        case .collectionResult(let m): m
        case .changesQuery(let m): m
        case .changesResult(let m): m
        case .subscribe(let m): m
        case .subscribed(let m): m
        case .unsubscribe(let m): m
        case .unsubscribed(let m): m
        case .update(let m): m
        case .getSourcePriority(let m): m
        case .sourcePriority(let m): m
        case .setSourcePriority(let m): m
        case .authorizationStatusQuery(let m): m
        case .authorizationStatus(let m): m
        case .serverInfoQuery(let m): m
        case .serverInfo(let m): m
        case .clusterStatusQuery(let m): m
        case .clusterStatus(let m): m
        case .adminRequest(let m): m
        case .adminResult(let m): m
        case .backupRequest(let m): m
        case .backupResult(let m): m
        case .workoutInsert(let m): m
        case .workoutInsertAck(let m): m
        case .workoutQuery(let m): m
        case .workoutResult(let m): m
        case .workoutDelete(let m): m
        case .characteristicsSet(let m): m
        case .characteristicsQuery(let m): m
        case .characteristicsResult(let m): m
        case .activitySummaryInsert(let m): m
        case .activitySummaryInsertAck(let m): m
        case .activitySummaryQuery(let m): m
        case .activitySummaryResult(let m): m
        case .correlationInsert(let m): m
        case .correlationInsertAck(let m): m
        case .correlationQuery(let m): m
        case .correlationResult(let m): m
        case .correlationDelete(let m): m
        case .routeInsert(let m): m
        case .routeInsertAck(let m): m
        case .routeQuery(let m): m
        case .routeResult(let m): m
        }
    }
}

extension Message {
    /// The wrapped message if it is a request (a client sends it and the server answers); `nil` for replies and
    /// handshake messages.
    public var request: (any Request)? {
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

    /// The subject whose partition serves this request in cluster mode (``Request/placedSubject``); `nil` for
    /// every other message.
    public var placedSubject: String? { request?.placedSubject }

    /// Checks a request as the server does before any work is queued (``Request/checked()``); nothing for other
    /// messages.
    public func validateRequest() throws(HealthError) {
        do {
            _ = try request?.checked()
        } catch let error as HealthError {
            throw error
        } catch {
            throw HealthError(.internalError, "validation failed: \(error)")
        }
    }
}
