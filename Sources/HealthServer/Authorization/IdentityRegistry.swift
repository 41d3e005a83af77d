import Foundation
import HealthCodec
import HealthModel
import HealthPosix
import HealthWire
import Synchronization

/// The client identities of one data directory (`identities.json`, mode 0600): who may connect, with which
/// subjects and per-type grants. Tokens are never kept: per identity a salt and the handshake's verifier
/// (StoredKey and ServerKey, ``TokenVerifier``).
///
/// Thread-safe: one mutex around the table; every change is written to disk (atomic replace) before it is
/// visible, so a revocation holds across restarts and applies to the next request of every open connection.
public final class IdentityRegistry: Sendable {
    /// The identity file's name inside the data directory.
    public static let fileName = "identities.json"
    /// The first admin identity's token, written once at first start.
    public static let adminTokenFileName = "admin.token"

    private let path: String
    private let state: Mutex<IdentityFile>

    private init(path: String, file: IdentityFile) {
        self.path = path
        state = Mutex(file)
    }

    /// The first id a registry made again for a directory with data gets: far above the ids the lost file can
    /// have handed out, so that no new identity becomes the writer of samples an old identity wrote.
    static let firstIDAfterReset: UInt32 = 1 << 31

    /// Loads `directory`'s identities; on first start creates the `admin` identity and writes its token to
    /// `admin.token` (mode 0600), logging the path (never the token). Throws ``ErrorCode/storageUnavailable``
    /// when a file cannot be read or written, and refuses an `admin.token` readable by group or others.
    ///
    /// A missing `identities.json` in a directory that holds data (`existingData` names the evidence) is refused
    /// unless `resetAdmin`: then a new registry starts, its ids above ``firstIDAfterReset``. With `resetAdmin`
    /// and an existing file, a new admin identity (`admin-ID`) is added; either way its token replaces
    /// `admin.token`.
    public static func open(
        directory: String, resetAdmin: Bool = false, existingData: String? = nil, log: (String) -> Void
    ) throws -> IdentityRegistry {
        let path = directory + "/" + fileName
        let tokenPath = directory + "/" + adminTokenFileName
        do {
            if try FileSystem.exists(tokenPath) {
                let mode = try FileSystem.permissions(of: tokenPath)
                if mode & 0o077 != 0 {
                    throw HealthError(
                        .storageUnavailable,
                        "\(tokenPath) is readable by other users (mode \(String(mode, radix: 8))); "
                            + "run chmod 600 \(tokenPath) (and consider revoking that token)")
                }
            }
            if try FileSystem.exists(path) {
                let bytes = try FileSystem.readFile(path, maxBytes: 64 << 20)
                var file: IdentityFile
                do {
                    file = try JSONDecoder().decode(IdentityFile.self, from: Data(bytes))
                } catch {
                    throw HealthError(.storageUnavailable, "\(path) is not a valid identity file: \(error)")
                }
                let registry: IdentityRegistry
                switch file.format {
                case IdentityFile.currentFormat:
                    try file.checkVerifiers(path)
                    registry = IdentityRegistry(path: path, file: file)
                case 1:
                    registry = IdentityRegistry(path: path, file: file)
                    let count = try registry.upgradeFromFormat1()
                    log(
                        "converted \(path) to format \(IdentityFile.currentFormat): \(count) token hashes became handshake verifiers"
                    )
                default:
                    throw HealthError(
                        .storageUnavailable,
                        "\(path) has format \(file.format); this hkd reads formats 1 and \(IdentityFile.currentFormat)")
                }
                if resetAdmin {
                    try registry.mintAdmin(
                        named: "admin-\(registry.state.withLock { $0.nextID })", tokenPath: tokenPath, log: log)
                }
                return registry
            }
            if let existingData, !resetAdmin {
                throw HealthError(
                    .storageUnavailable,
                    "\(path) is missing but \(directory) holds data (\(existingData)): a new admin identity would "
                        + "take over its identities. Restore \(path) from a backup, or start hkd with --reset-admin "
                        + "to create a new admin identity (its token replaces \(tokenPath))")
            }
            let firstID = existingData == nil ? 1 : firstIDAfterReset
            let registry = IdentityRegistry(
                path: path,
                file: IdentityFile(nextID: firstID, identities: [], unknownSaltKey: Hex.encode(try random(32))))
            try registry.mintAdmin(named: "admin", tokenPath: tokenPath, log: log)
            return registry
        } catch let error as SystemError {
            throw HealthError(.storageUnavailable, "cannot open the identities in \(directory): \(error)")
        }
    }

    /// Creates an admin identity with every grant and writes its token to `tokenPath` (mode 0600).
    private func mintAdmin(named name: String, tokenPath: String, log: (String) -> Void) throws {
        let spec = IdentitySpec(name: name, grants: [TypeGrant(type: "*", share: true, read: true)], isAdmin: true)
        let (_, token) = try create(spec)
        try FileSystem.writeFileAtomically(tokenPath, Array((token + "\n").utf8), permissions: 0o600)
        log("created the admin identity \(name); its token is in \(tokenPath) (mode 0600)")
    }

    // MARK: Authentication

    /// The salt to challenge token id `id` with, and its verifier. For an id no identity has, a made-up pair
    /// derived from the file's `unknownSaltKey` (the same at every attempt, like a real one; no proof matches
    /// it, and checking one costs what checking a real one does). A revoked identity gets its real salt: the
    /// refusal comes after its proof.
    public func challengeMaterial(for id: UInt32) -> (salt: [UInt8], verifier: TokenVerifier) {
        let (found, saltKey) = state.withLock { file in (file.identities.first { $0.id == id }, file.unknownSaltKey) }
        if let found, let salt = Hex.decode(found.salt), let verifier = found.verifier { return (salt, verifier) }
        let key = Hex.decode(saltKey ?? "") ?? []
        var idBytes: [UInt8] = []
        withUnsafeBytes(of: id.bigEndian) { idBytes += $0 }
        let salt = HMACSHA256.authenticationCode(key: key, message: Array("unknown identity salt".utf8) + idBytes)
        let decoy = HMACSHA256.authenticationCode(key: key, message: Array("unknown identity verifier".utf8) + idBytes)
        return (Array(salt.prefix(16)), TokenVerifier(saltedToken: decoy))
    }

    /// The identity whose token a handshake just proved: ``ErrorCode/tokenRevoked`` once it was revoked.
    public func identity(provenFor id: UInt32) throws(HealthError) -> ClientIdentity {
        let found = state.withLock { file in file.identities.first { $0.id == id } }
        guard let identity = found else { throw TokenAuthenticator.invalid }
        if identity.revoked { throw HealthError(.tokenRevoked, "the identity \"\(identity.name)\" was revoked") }
        return ClientIdentity(name: identity.name, id: identity.id)
    }

    /// Rewrites a format-1 file as format 2: each `tokenHash` (SHA-256 of salt and secret) is exactly the
    /// handshake's SaltedToken, so it becomes StoredKey and ServerKey and is dropped; the file gains its
    /// `unknownSaltKey`. Returns how many identities were converted.
    func upgradeFromFormat1() throws -> Int {
        let key = Hex.encode(try Self.random(32))
        return try change { file in
            var converted = 0
            for index in file.identities.indices {
                guard let hash = file.identities[index].tokenHash.flatMap({ Hex.decode($0) }), hash.count == 32 else {
                    throw HealthError(
                        .storageUnavailable, "the identity \"\(file.identities[index].name)\" has no valid tokenHash")
                }
                file.identities[index].setVerifier(TokenVerifier(saltedToken: hash))
                file.identities[index].tokenHash = nil
                converted += 1
            }
            file.format = IdentityFile.currentFormat
            file.unknownSaltKey = key
            return converted
        }
    }

    /// What `identity` may do now: ``ErrorCode/tokenRevoked`` once it was revoked (open connections included).
    public func access(for identity: ClientIdentity) throws -> IdentityAccess {
        let found = state.withLock { file in file.identities.first { $0.id == identity.id } }
        guard let found else { throw HealthError(.unauthenticated, "the identity \"\(identity.name)\" does not exist") }
        if found.revoked { throw HealthError(.tokenRevoked, "the identity \"\(found.name)\" was revoked") }
        return found.access
    }

    // MARK: Administration

    /// Carries out an admin request for an admin identity.
    public func perform(_ operation: AdminOperation) throws -> AdminResult {
        switch operation {
        case .create(let spec):
            let (info, token) = try create(spec)
            return AdminResult(identities: [info], token: token)
        case .list:
            return AdminResult(identities: state.withLock { $0.identities.map(\.info) })
        case .update(let spec):
            return AdminResult(identities: [try update(spec)])
        case .revoke(let name):
            return AdminResult(identities: [try revoke(name)])
        }
    }

    /// Creates an identity; returns it and its token (the only time the token exists outside the client).
    func create(_ given: IdentitySpec) throws -> (IdentityInfo, String) {
        let spec = try Self.validated(given)
        let salt = try Self.random(16)
        let secret = try Self.random(AccessToken.secretBytes)
        return try change { file in
            if file.identities.contains(where: { $0.name == spec.name }) {
                throw HealthError(.invalidArgument, "an identity named \"\(spec.name)\" exists already")
            }
            guard file.nextID < UInt32.max else { throw HealthError(.invalidArgument, "no identity ids are left") }
            let token = AccessToken(identityID: file.nextID, secret: secret)
            var identity = StoredIdentity(
                id: file.nextID, name: spec.name, subjects: [], grants: [], admin: false,
                createdAt: Timestamp(Date().timeIntervalSince1970 * 1_000_000), revoked: false, salt: Hex.encode(salt))
            identity.setVerifier(TokenVerifier(saltedToken: AccessToken.saltedToken(secret: secret, salt: salt)))
            identity.adopt(spec)
            file.nextID += 1
            file.identities.append(identity)
            return (identity.info, token.text)
        }
    }

    private func update(_ given: IdentitySpec) throws -> IdentityInfo {
        let spec = try Self.validated(given)
        return try change { file in
            guard let index = file.identities.firstIndex(where: { $0.name == spec.name }) else {
                throw HealthError(.invalidArgument, "no identity is named \"\(spec.name)\"")
            }
            if file.identities[index].revoked {
                throw HealthError(.invalidArgument, "the identity \"\(spec.name)\" was revoked; create a new one")
            }
            file.identities[index].adopt(spec)
            try Self.checkAnAdminRemains(file)
            return file.identities[index].info
        }
    }

    private func revoke(_ name: String) throws -> IdentityInfo {
        try change { file in
            guard let index = file.identities.firstIndex(where: { $0.name == name }) else {
                throw HealthError(.invalidArgument, "no identity is named \"\(name)\"")
            }
            file.identities[index].revoked = true
            try Self.checkAnAdminRemains(file)
            return file.identities[index].info
        }
    }

    /// Applies `body` to a copy, writes the copy to disk, then makes it current; a throw changes nothing.
    private func change<Result>(_ body: (inout IdentityFile) throws -> Result) throws -> Result {
        try state.withLock { current in
            var next = current
            let result = try body(&next)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            do {
                try FileSystem.writeFileAtomically(path, Array(try encoder.encode(next)), permissions: 0o600)
            } catch {
                throw HealthError(.storageUnavailable, "cannot write \(path): \(error)")
            }
            current = next
            return result
        }
    }

    /// `count` bytes from the system CSPRNG; ``ErrorCode/internalError`` if it fails.
    static func random(_ count: Int) throws(HealthError) -> [UInt8] {
        do {
            return try SecureRandom.bytes(count)
        } catch {
            throw HealthError(.internalError, "cannot draw random bytes: \(error)")
        }
    }

    private static func checkAnAdminRemains(_ file: IdentityFile) throws {
        guard file.identities.contains(where: { $0.admin && !$0.revoked }) else {
            throw HealthError(.invalidArgument, "the change would leave no admin identity")
        }
    }

    /// The spec with type identifiers in catalog spelling; throws ``ErrorCode/invalidArgument`` (or
    /// ``ErrorCode/unknownQuantityType``) naming what is wrong.
    static func validated(_ spec: IdentitySpec) throws -> IdentitySpec {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard !spec.name.isEmpty, spec.name.count <= 64, spec.name.allSatisfy(allowed.contains) else {
            throw HealthError(
                .invalidArgument, "an identity name has 1 to 64 letters, digits, '.', '_' or '-', not \"\(spec.name)\"")
        }
        for subject in spec.subjects { try SampleRules.validate(subject: subject) }
        var normalized = spec
        normalized.subjects = Array(Set(spec.subjects)).sorted()
        normalized.grants = try spec.grants.map { grant in
            var grant = grant
            if grant.type != "*" { grant.type = try IdentityAccess.grantIdentifier(grant.type) }
            return grant
        }
        return normalized
    }
}
