import HealthCodec
import HealthModel

/// Every message of the protocol, typed. `Message.decode` turns a ``Frame`` into one; `frame(requestID:)` back.
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
    case adminRequest(AdminRequest)
    case adminResult(AdminResult)

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
        case .adminRequest(let m): m
        case .adminResult(let m): m
        }
    }

    public var kind: MessageKind { type(of: body).kind }

    /// A frame carrying this message.
    public func frame(requestID: UInt32, flags: FrameFlags = []) -> Frame {
        Frame(kind: kind, flags: flags, requestID: requestID, payload: body.encodedPayload())
    }

    /// Decodes a frame's payload as the message its kind names.
    ///
    /// Throws ``HealthError`` with code ``ErrorCode/malformedPayload`` naming the kind and the problem.
    public static func decode(_ frame: Frame, limits: MessageLimits = .standard) throws(HealthError) -> Message {
        do {
            let p = frame.payload
            switch frame.kind {
            case .hello: return .hello(try Hello(payload: p, limits: limits))
            case .challenge: return .challenge(try Challenge(payload: p, limits: limits))
            case .proof: return .proof(try Proof(payload: p, limits: limits))
            case .welcome: return .welcome(try Welcome(payload: p, limits: limits))
            case .error: return .error(try ErrorReply(payload: p, limits: limits))
            case .ping: return .ping(try Ping(payload: p, limits: limits))
            case .pong: return .pong(try Pong(payload: p, limits: limits))
            case .insert: return .insert(try Insert(payload: p, limits: limits))
            case .insertAck: return .insertAck(try InsertAck(payload: p, limits: limits))
            case .delete: return .delete(try Delete(payload: p, limits: limits))
            case .deleteAck: return .deleteAck(try DeleteAck(payload: p, limits: limits))
            case .sampleQuery: return .sampleQuery(try SampleQuery(payload: p, limits: limits))
            case .sampleResult: return .sampleResult(try SampleResult(payload: p, limits: limits))
            case .statisticsQuery: return .statisticsQuery(try StatisticsQuery(payload: p, limits: limits))
            case .statisticsResult: return .statisticsResult(try StatisticsResult(payload: p, limits: limits))
            case .collectionQuery: return .collectionQuery(try CollectionQuery(payload: p, limits: limits))
            case .collectionResult: return .collectionResult(try CollectionResult(payload: p, limits: limits))
            case .changesQuery: return .changesQuery(try ChangesQuery(payload: p, limits: limits))
            case .changesResult: return .changesResult(try ChangesResult(payload: p, limits: limits))
            case .subscribe: return .subscribe(try Subscribe(payload: p, limits: limits))
            case .subscribed: return .subscribed(try Subscribed(payload: p, limits: limits))
            case .unsubscribe: return .unsubscribe(try Unsubscribe(payload: p, limits: limits))
            case .unsubscribed: return .unsubscribed(try Unsubscribed(payload: p, limits: limits))
            case .update: return .update(try Update(payload: p, limits: limits))
            case .getSourcePriority: return .getSourcePriority(try GetSourcePriority(payload: p, limits: limits))
            case .sourcePriority: return .sourcePriority(try SourcePriority(payload: p, limits: limits))
            case .setSourcePriority: return .setSourcePriority(try SetSourcePriority(payload: p, limits: limits))
            case .authorizationStatusQuery:
                return .authorizationStatusQuery(try AuthorizationStatusQuery(payload: p, limits: limits))
            case .authorizationStatus: return .authorizationStatus(try AuthorizationStatus(payload: p, limits: limits))
            case .serverInfoQuery: return .serverInfoQuery(try ServerInfoQuery(payload: p, limits: limits))
            case .serverInfo: return .serverInfo(try ServerInfo(payload: p, limits: limits))
            case .adminRequest: return .adminRequest(try AdminRequest(payload: p, limits: limits))
            case .adminResult: return .adminResult(try AdminResult(payload: p, limits: limits))
            }
        } catch let error as CodecError {
            throw HealthError(error.code, "\(frame.kind) payload: \(error.message)")
        } catch let error as HealthError {
            throw error
        } catch {
            throw HealthError(.malformedPayload, "\(frame.kind) payload: \(error)")
        }
    }
}
