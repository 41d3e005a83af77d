import HealthModel
import HealthWire

/// One identity as `identities.json` keeps it: its spec, numeric id, salt and handshake verifier (never the
/// token, nor anything a client could log in with).
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
    /// StoredKey (``TokenVerifier/storedKey``), hex; format 2.
    var storedKey: String?
    /// ServerKey (``TokenVerifier/serverKey``), hex; format 2.
    var serverKey: String?
    /// Format 1 only: SHA-256 of salt and token secret, hex. Converted to the two keys at first start, then
    /// dropped (it would let anyone compute proofs).
    var tokenHash: String?

    init(
        id: UInt32, name: String, subjects: [String], grants: [StoredGrant], admin: Bool, createdAt: Timestamp,
        revoked: Bool, salt: String
    ) {
        self.id = id
        self.name = name
        self.subjects = subjects
        self.grants = grants
        self.admin = admin
        self.createdAt = createdAt
        self.revoked = revoked
        self.salt = salt
    }

    /// The handshake verifier, when both keys are present and 32 bytes.
    var verifier: TokenVerifier? {
        guard let stored = storedKey.flatMap({ Hex.decode($0) }), let server = serverKey.flatMap({ Hex.decode($0) }),
            stored.count == 32, server.count == 32
        else { return nil }
        return TokenVerifier(storedKey: stored, serverKey: server)
    }

    mutating func setVerifier(_ verifier: TokenVerifier) {
        storedKey = Hex.encode(verifier.storedKey)
        serverKey = Hex.encode(verifier.serverKey)
    }

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
    /// The format this hkd writes: 2 keeps handshake verifiers (1 kept token hashes; it is converted on load).
    static let currentFormat = 2

    var format = IdentityFile.currentFormat
    /// The id the next identity gets.
    var nextID: UInt32
    var identities: [StoredIdentity]
    /// 32 random bytes, hex (format 2): the key of the made-up salts unknown token ids are challenged with.
    var unknownSaltKey: String?

    /// Throws ``ErrorCode/storageUnavailable`` unless every identity has a verifier and the salt key is there.
    func checkVerifiers(_ path: String) throws {
        guard unknownSaltKey.flatMap({ Hex.decode($0) })?.count == 32 else {
            throw HealthError(.storageUnavailable, "\(path) lacks a valid unknownSaltKey")
        }
        for identity in identities where identity.verifier == nil || Hex.decode(identity.salt) == nil {
            throw HealthError(
                .storageUnavailable,
                "\(path): the identity \"\(identity.name)\" has no valid salt, storedKey and serverKey")
        }
    }
}
