import HealthEngine
import HealthModel
import HealthWire

// Requests about the server rather than one subject's data: pings, authorization status, server info, the
// cluster's partitions, identities and backups.

extension Ping: ServedRequest {

    /// Echoes a nonce: nothing to check.
    static func authorize(_ request: Ping, access: IdentityAccess, dispatcher: RequestDispatcher) -> Authorized<Ping> {
        .serve(request)
    }

    /// Connections answer pings themselves; a dispatcher handed one answers the same.
    static func serve(_ request: Ping, dispatcher: RequestDispatcher, writer: UInt32) -> [Message] {
        [.pong(Pong(nonce: request.nonce))]
    }
}

extension AuthorizationStatusQuery: ServedRequest {
    /// The types as grant identifiers (a quantity or category type's, or `workout`, `characteristics`, …).

    /// HealthKit's authorization status: about sharing only.
    static func authorize(
        _ request: AuthorizationStatusQuery, access: IdentityAccess, dispatcher: RequestDispatcher
    ) throws -> Authorized<AuthorizationStatusQuery> {
        .answered([
            .authorizationStatus(
                AuthorizationStatus(
                    statuses: try request.types.map(IdentityAccess.grantIdentifier).map {
                        .init(type: $0, state: access.sharingStatus(identifier: $0, subject: request.subject))
                    }))
        ])
    }

    /// Authorization off (`hkd --auth off`): every connection may share every type.
    static func serve(_ request: AuthorizationStatusQuery, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        let types = try request.types.map(IdentityAccess.grantIdentifier)
        return [
            .authorizationStatus(
                AuthorizationStatus(statuses: types.map { .init(type: $0, state: .sharingAuthorized) }))
        ]
    }
}

extension ServerInfoQuery: ServedRequest {

    /// Subject and sample counts and the store's memory by structure describe everyone's data: only
    /// administrators see them.
    static func authorize(_ request: ServerInfoQuery, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<ServerInfoQuery>
    {
        if access.isAdmin { return .serve(request) }
        var info = try dispatcher.serverInfo()
        info.subjects = 0
        info.samplesPerType = []
        info.memoryParts = []
        return .answered([.serverInfo(info)])
    }

    static func serve(_ request: ServerInfoQuery, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message] {
        [.serverInfo(try dispatcher.serverInfo())]
    }
}

extension ClusterStatusQuery: ServedRequest {

    /// Which node holds which partition, and how far each stream goes: for operators.
    static func authorize(_ request: ClusterStatusQuery, access: IdentityAccess, dispatcher: RequestDispatcher)
        throws -> Authorized<ClusterStatusQuery>
    {
        try access.checkAdmin("read the cluster's status")
        return .serve(request)
    }

    static func serve(_ request: ClusterStatusQuery, dispatcher: RequestDispatcher, writer: UInt32) throws
        -> [Message]
    {
        [.clusterStatus(try dispatcher.clusterStatus?() ?? ClusterStatus(node: "", partitions: []))]
    }
}

extension AdminRequest: ServedRequest {

    /// Administrators manage identities; the registry answers.
    static func authorize(_ request: AdminRequest, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<AdminRequest>
    {
        try access.checkAdmin("administer identities")
        guard let identities = dispatcher.identities else { return .serve(request) }
        return .answered([.adminResult(try identities.perform(request.operation))])
    }

    static func serve(_ request: AdminRequest, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message] {
        throw HealthError(.forbidden, "administration needs authorization on (this hkd runs with --auth off)")
    }
}

extension BackupRequest: ServedRequest {

    static func authorize(_ request: BackupRequest, access: IdentityAccess, dispatcher: RequestDispatcher) throws
        -> Authorized<BackupRequest>
    {
        try access.checkAdmin("take backups")
        return .serve(request)
    }

    static func serve(_ request: BackupRequest, dispatcher: RequestDispatcher, writer: UInt32) throws -> [Message] {
        [.backupResult(try dispatcher.backup(into: request.directory))]
    }
}
