import HealthModel
import HealthWire

extension HealthClient {
    /// HealthKit's sharing status of each type for this connection's identity, in request order (read access
    /// is never revealed).
    public func authorizationStatus(_ types: [String], subject: String = "") async throws(HealthClientError)
        -> [AuthorizationStatus.TypeAuthorization]
    {
        try await send(AuthorizationStatusQuery(types: types, subject: subject)).statuses
    }

    /// Carries out an identity administration request (admin identities only); `create` returns the token.
    public func administer(_ operation: AdminOperation) async throws(HealthClientError) -> AdminResult {
        try await send(AdminRequest(operation))
    }
}
