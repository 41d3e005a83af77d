import HealthCluster
import HealthModel

/// Cluster mode's identities: one table for every node, the value of ``ClusterSetup/identitiesKey`` in the
/// cluster's settings bucket (its JSON is `identities.json`'s), written only against the revision read.
struct ClusterIdentityStorage: IdentityStorage {
    let bucket: KeyValueBucket
    var name: String { "\(bucket.name)/\(ClusterSetup.identitiesKey)" }
    var isShared: Bool { true }

    func load() throws -> (bytes: [UInt8], version: UInt64)? {
        do throws(NATSFailure) {
            return try bucket.get(ClusterSetup.identitiesKey).map { ($0.value, $0.revision) }
        } catch {
            throw error.healthError
        }
    }

    func store(_ bytes: [UInt8], replacing version: UInt64?) throws -> UInt64? {
        do throws(NATSFailure) {
            guard let version else { return try bucket.create(ClusterSetup.identitiesKey, bytes) }
            return try bucket.update(ClusterSetup.identitiesKey, bytes, last: version)
        } catch {
            throw error.healthError
        }
    }
}
