import HealthEngine
import HealthModel
import HealthWire

extension RequestDispatcher {
    /// Checks `message` against `access` and answers it (HEALTHKIT.md §10): writes need the share grant and the
    /// subject; deletes reach only the identity's own samples; reads without the read grant see only the
    /// identity's own samples; nothing in a reply tells such an identity that other samples exist.
    ///
    /// Every request kind is listed: a new kind must choose its rule here (one without is refused), and read
    /// paths narrow their filter with ``IdentityAccess/readFilter(_:subject:type:)``.
    func authorizedReply(to message: Message, access: IdentityAccess, identities: IdentityRegistry) throws -> [Message]
    {
        var message = message
        switch message {
        case .insert(let m):
            try access.checkShare(subject: m.batch.subject, type: m.batch.typeIdentifier)

        case .delete(var m):
            let filter: SampleFilter
            switch m.selection {
            case .uuids(let uuids): filter = SampleFilter(uuids: Set(uuids))
            case .filter(let given): filter = given
            }
            m.selection = .filter(try access.deleteFilter(filter, subject: m.subject, type: m.type))
            message = .delete(m)

        case .sampleQuery(var m):
            m.filter = try access.readFilter(m.filter, subject: m.subject, type: m.type)
            message = .sampleQuery(m)

        case .statisticsQuery(var m):
            m.filter = try access.readFilter(m.filter, subject: m.subject, type: m.type)
            message = .statisticsQuery(m)

        case .collectionQuery(var m):
            m.filter = try access.readFilter(m.filter, subject: m.subject, type: m.type)
            message = .collectionQuery(m)

        case .getSourcePriority(let m):
            try access.checkSubject(m.subject)
            let type = try QuantityType.named(m.type)
            // The source list names apps that wrote samples: without read it would reveal that data exists.
            if !access.canRead(type) {
                return [.sourcePriority(SourcePriority(subject: m.subject, type: type.identifier, sources: []))]
            }

        case .setSourcePriority(let m):
            try access.checkShare(subject: m.subject, type: m.type)
            guard access.canRead(try QuantityType.named(m.type)) else {
                throw HealthError(
                    .forbidden,
                    "identity \"\(access.name)\" needs share and read permission for \(m.type) to order its sources")
            }

        case .authorizationStatusQuery(let m):
            return [
                .authorizationStatus(
                    AuthorizationStatus(
                        statuses: try m.types.map { name in
                            let type = try IdentityAccess.grantIdentifier(name)
                            return .init(type: type, state: access.sharingStatus(identifier: type, subject: m.subject))
                        }))
            ]

        case .serverInfoQuery:
            let replies = try reply(to: message, writer: access.id)
            // Subject and sample counts describe everyone's data: only administrators see them.
            guard !access.isAdmin, case .serverInfo(var info) = replies.first else { return replies }
            info.subjects = 0
            info.samplesPerType = []
            return [.serverInfo(info)]

        case .adminRequest(let m):
            try access.checkAdmin("administer identities")
            return [.adminResult(try identities.perform(m.operation))]

        case .clusterStatusQuery:
            // Which node holds which partition, and how far each stream goes: for operators.
            try access.checkAdmin("read the cluster's status")

        case .backupRequest:
            try access.checkAdmin("take backups")

        case .changesQuery(var m):
            // Added samples and deletion records alike: without read, only the identity's own.
            m.filter = try access.readFilter(m.filter, subject: m.subject, type: m.type)
            message = .changesQuery(m)

        case .subscribe(var m):
            // Served by the connection (ConnectionSubscriptions), which narrows through authorizedSubscription;
            // narrowed here too so that no path carries an unchecked subscription.
            m.request = try RequestDispatcher.narrow(m.request, access: access)
            message = .subscribe(m)

        case .workoutInsert, .workoutQuery, .workoutDelete:
            message = try access.authorizedWorkoutRequest(message)

        case .characteristicsSet, .characteristicsQuery, .activitySummaryInsert, .activitySummaryQuery:
            try access.checkProfileRequest(message)
        case .correlationInsert, .correlationQuery, .correlationDelete:
            message = try access.authorizedCorrelationRequest(message)

        case .routeInsert, .routeQuery:
            message = try access.authorizedRouteRequest(message)

        case .unsubscribe, .ping:
            // Ends only a subscription of the same connection, or echoes a nonce: nothing to check.
            break

        default:
            // Replies never reach the dispatcher; a request kind without a rule above is refused, never served
            // unchecked.
            guard message.kind.isRequest else { break }
            throw HealthError(.unsupportedRequest, "\(message.kind) has no authorization rule in this server")
        }
        return try reply(to: message, writer: access.id)
    }
}

extension RequestDispatcher {
    /// `request` as `identity` may watch it (its filter narrowed by ``IdentityAccess/readFilter(_:subject:type:)``,
    /// so every update is computed with the subscriber's filter); unchanged with `hkd --auth off`. Throws
    /// ``ErrorCode/forbidden`` for a subject outside the identity's, and the registry's errors for a revoked or
    /// deleted identity. Called at subscribe time and again before every update, so grant changes apply at once.
    /// In cluster mode it first throws ``ErrorCode/notOwner`` unless this node serves the subject: a subscription
    /// lives where its subject's changes are applied.
    func authorizedSubscription(_ request: SubscriptionRequest, identity: ClientIdentity) throws -> SubscriptionRequest
    {
        if let placement { try placement(request.subject) }
        guard let identities else { return request }
        return try RequestDispatcher.narrow(request, access: identities.access(for: identity))
    }

    /// `request` with the filter of the query it wraps narrowed to what `access` may read.
    static func narrow(_ request: SubscriptionRequest, access: IdentityAccess) throws -> SubscriptionRequest {
        switch request {
        case .observer(let subject, let type, let filter):
            return .observer(
                subject: subject, type: type, filter: try access.readFilter(filter, subject: subject, type: type))
        case .anchored(var query):
            query.filter = try access.readFilter(query.filter, subject: query.subject, type: query.type)
            return .anchored(query)
        case .collection(var query):
            query.filter = try access.readFilter(query.filter, subject: query.subject, type: query.type)
            return .collection(query)
        }
    }
}
