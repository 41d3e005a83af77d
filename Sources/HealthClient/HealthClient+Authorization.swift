import HealthModel
import HealthWire

extension HealthClient {
    /// HealthKit's sharing status of each type for this connection's identity, in request order (read access
    /// is never revealed).
    public func authorizationStatus(_ types: [String]) async throws(HealthClientError) -> [AuthorizationStatus
        .TypeAuthorization]
    {
        let reply = try await requestOne(.authorizationStatusQuery(AuthorizationStatusQuery(types: types)))
        guard case .authorizationStatus(let result) = reply else {
            throw Self.unexpected(reply, to: .authorizationStatusQuery)
        }
        return result.statuses
    }

    /// Carries out an identity administration request (admin identities only); `create` returns the token.
    public func administer(_ operation: AdminOperation) async throws(HealthClientError) -> AdminResult {
        let reply = try await requestOne(.adminRequest(AdminRequest(operation)))
        guard case .adminResult(let result) = reply else { throw Self.unexpected(reply, to: .adminRequest) }
        return result
    }
}
