import HealthModel
import HealthWire

/// One identity as `identities.json` keeps it: its spec, numeric id, salt and token hash (never the token).
struct StoredIdentity: Codable, Hashable, Sendable {
    /// Stable for the identity's life and never reused: it marks every sample the identity writes.
    var id: UInt32
    var name: String
    /// Empty: every subject.
    var subjects: [String]
    var grants: [StoredGrant]
    var admin: Bool
    var createdAt: Timestamp
    var revoked: Bool
    /// 16 random bytes, hex.
    var salt: String
    /// SHA-256 of salt and token secret, hex.
    var tokenHash: String

    /// One ``TypeGrant``.
    struct StoredGrant: Codable, Hashable, Sendable {
        var type: String
        var share: Bool
        var read: Bool
    }

    var spec: IdentitySpec {
        IdentitySpec(
            name: name, subjects: subjects,
            grants: grants.map { TypeGrant(type: $0.type, share: $0.share, read: $0.read) },
            isAdmin: admin)
    }

    var info: IdentityInfo { IdentityInfo(spec: spec, createdAt: createdAt, revoked: revoked) }

    /// Takes the subjects, grants and admin flag of a validated spec.
    mutating func adopt(_ spec: IdentitySpec) {
        subjects = spec.subjects
        grants = spec.grants.map { StoredGrant(type: $0.type, share: $0.share, read: $0.read) }
        admin = spec.isAdmin
    }

    /// What the identity may do, for the dispatcher.
    var access: IdentityAccess {
        IdentityAccess(
            id: id, name: name, subjects: subjects.isEmpty ? nil : Set(subjects),
            grants: grants.map { TypeGrant(type: $0.type, share: $0.share, read: $0.read) }, isAdmin: admin)
    }
}

/// The identity file's top level.
struct IdentityFile: Codable, Sendable {
    var format = 1
    /// The id the next identity gets.
    var nextID: UInt32
    var identities: [StoredIdentity]
}
