import HealthEngine
import HealthModel
import HealthWire

// The order of a subject's sources for a type (HEALTHKIT.md §8).

extension GetSourcePriority: ServedRequest {

    /// The list names apps that wrote samples: without the read grant it would reveal that data exists, so such
    /// an identity gets an empty list.
    static func authorize(
        _ request: TypedRequest<GetSourcePriority>, access: IdentityAccess, dispatcher: RequestDispatcher
    ) throws -> Authorized<TypedRequest<GetSourcePriority>> {
        try access.checkSubject(request.request.subject)
        guard access.canRead(request.type) else {
            return .answered([
                .sourcePriority(
                    SourcePriority(subject: request.request.subject, type: request.type.identifier, sources: []))
            ])
        }
        return .serve(request)
    }

    static func serve(_ request: TypedRequest<GetSourcePriority>, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        [try dispatcher.sourcePriorityReply(subject: request.request.subject, type: request.type)]
    }
}

extension SetSourcePriority: ServedRequest {

    static func authorize(
        _ request: TypedRequest<SetSourcePriority>, access: IdentityAccess, dispatcher: RequestDispatcher
    ) throws -> Authorized<TypedRequest<SetSourcePriority>> {
        try access.checkShare(subject: request.request.subject, type: request.type)
        guard access.canRead(request.type) else {
            throw HealthError(
                .forbidden,
                "identity \"\(access.name)\" needs share and read permission for \(request.type) to order its sources")
        }
        return .serve(request)
    }

    /// Sources are named by name or bundle identifier; a name no sample carries is kept for when one does.
    static func serve(_ request: TypedRequest<SetSourcePriority>, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let m = request.request
        let known = try dispatcher.store.sourcePriority(subject: m.subject, type: request.type)
        let order = m.order.map { name in
            known.first { $0.name == name || (!$0.bundleIdentifier.isEmpty && $0.bundleIdentifier == name) }
                ?? SourceInfo(name: name)
        }
        try dispatcher.durable.setSourcePriority(subject: m.subject, type: request.type, order: order)
        return [try dispatcher.sourcePriorityReply(subject: m.subject, type: request.type)]
    }
}

extension RequestDispatcher {
    /// The effective source priority of `subject`'s samples of `type`.
    func sourcePriorityReply(subject: String, type: QuantityType) throws -> Message {
        .sourcePriority(
            SourcePriority(
                subject: subject, type: type.identifier, sources: try store.sourcePriority(subject: subject, type: type)
            ))
    }
}
