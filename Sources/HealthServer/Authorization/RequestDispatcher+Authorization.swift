import HealthEngine
import HealthModel
import HealthWire

extension RequestDispatcher {
    /// Checks `message` against `access` and answers it (HEALTHKIT.md §10): writes need the share grant and the
    /// subject; deletes reach only the identity's own samples; reads without the read grant see only the
    /// identity's own samples; nothing in a reply tells such an identity that other samples exist.
    ///
    /// Every request kind is listed: a new kind (change queries, subscriptions) must choose its rule here, and
    /// read paths narrow their filter with ``IdentityAccess/readFilter(_:subject:type:)``.
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
                            let type = try QuantityType.named(name)
                            return .init(type: type.identifier, state: access.sharingStatus(type))
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

        case .changesQuery, .subscribe, .unsubscribe:
            // Not carried out yet (reply(to:) refuses them); when they are, narrow their filter with readFilter.
            break

        case .hello, .welcome, .error, .ping, .pong, .insertAck, .deleteAck, .sampleResult, .statisticsResult,
            .collectionResult, .changesResult, .subscribed, .unsubscribed, .update, .sourcePriority,
            .authorizationStatus, .serverInfo, .adminResult:
            break
        }
        return try reply(to: message, writer: access.id)
    }
}
