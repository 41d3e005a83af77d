import Foundation
import HealthCodec
import HealthModel
import HealthPosix
import HealthWire
import Synchronization

/// The client identities of one data directory (`identities.json`, mode 0600), or of a whole cluster (kept in
/// its settings bucket): who may connect, with which subjects and per-type grants. Tokens are never kept: per
/// identity a salt and the handshake's verifier (StoredKey and ServerKey, ``TokenVerifier``).
///
/// Thread-safe: one mutex around the table, another serialising this process's changes; every change is stored
/// (``IdentityStorage``) before it is visible, so a revocation holds across restarts and applies to the next
/// request of every open connection. A shared table (cluster mode) is reloaded by ``refresh()``: a change made
/// on another node applies here once it is reloaded (hkd does every second), or at once for a token naming an
/// identity this node does not know yet.
public final class IdentityRegistry: Sendable {
    /// The identity file's name inside the data directory.
    public static let fileName = "identities.json"
    /// The first admin identity's token, written once at first start.
    public static let adminTokenFileName = "admin.token"
    /// The shortest time between two reloads of a shared table caused by unknown token ids.
    static let missReloadInterval: Duration = .milliseconds(250)

    private let storage: any IdentityStorage
    /// The table and the stored version it came from (`nil`: not stored yet).
    private let state: Mutex<(file: IdentityFile, version: UInt64?)>
    /// Held while this process changes the table.
    private let changing = Mutex(())
    /// When a shared table was last reloaded for an unknown token id.
    private let lastMissReload = Mutex(ContinuousClock.now - .seconds(1))

    private init(storage: any IdentityStorage, file: IdentityFile, version: UInt64?) {
        self.storage = storage
        state = Mutex((file, version))
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
        try open(
            IdentityFileStorage(path: directory + "/" + fileName), directory: directory, resetAdmin: resetAdmin,
            existingData: existingData, log: log)
    }

    /// Opens the identities kept in `storage`, `admin.token` being in `directory`. When `storage` holds none
    /// and `seed` does (cluster mode: a node's own `identities.json`), they become `storage`'s.
    static func open(
        _ storage: any IdentityStorage, seed: (any IdentityStorage)? = nil, directory: String, resetAdmin: Bool,
        existingData: String?, log: (String) -> Void
    ) throws -> IdentityRegistry {
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
        } catch let error as SystemError {
            throw HealthError(.storageUnavailable, "cannot open the identities in \(directory): \(error)")
        }
        let registry: IdentityRegistry
        if let (bytes, version) = try storage.load() {
            registry = IdentityRegistry(storage: storage, file: try decode(bytes, from: storage), version: version)
            if storage.isShared {
                let count = registry.state.withLock { $0.file.identities.count }
                log(
                    "the \(count) identities kept in \(storage.name) apply here "
                        + "(admin.token is with the node that made them)")
            }
        } else if let seed, let (bytes, _) = try seed.load() {
            registry = try adopt(try decode(bytes, from: seed), into: storage)
            log("the identities of \(seed.name) are now kept in \(storage.name)")
        } else {
            if let existingData, !resetAdmin {
                throw HealthError(
                    .storageUnavailable,
                    "\(storage.name) is missing but \(directory) holds data (\(existingData)): a new admin identity "
                        + "would take over its identities. Restore \(storage.name) from a backup, or start hkd with "
                        + "--reset-admin to create a new admin identity (its token replaces \(tokenPath))")
            }
            let fresh = IdentityFile(
                nextID: existingData == nil ? 1 : firstIDAfterReset, identities: [],
                unknownSaltKey: Hex.encode(try random(32)))
            registry = try adopt(fresh, into: storage)
            if registry.state.withLock({ $0.file.identities.isEmpty }) {
                try registry.mintAdmin(named: "admin", tokenPath: tokenPath, log: log)
            } else {
                log("the identities in \(storage.name) were created by another node; its admin.token is there")
            }
            return registry
        }
        if registry.state.withLock({ $0.file.format }) == 1 {
            let count = try registry.upgradeFromFormat1()
            log(
                "converted \(storage.name) to format \(IdentityFile.currentFormat): \(count) token hashes became "
                    + "handshake verifiers")
        }
        if resetAdmin {
            try registry.mintAdmin(
                named: "admin-\(registry.state.withLock { $0.file.nextID })", tokenPath: tokenPath, log: log)
        }
        return registry
    }

    /// A registry storing `file` in `storage`, which held nothing when read; if another writer stored a table
    /// meanwhile, that table wins (nodes starting together agree on one).
    private static func adopt(_ file: IdentityFile, into storage: any IdentityStorage) throws -> IdentityRegistry {
        if let version = try storage.store(try encode(file), replacing: nil) {
            return IdentityRegistry(storage: storage, file: file, version: version)
        }
        guard let (bytes, version) = try storage.load() else {
            throw HealthError(.storageUnavailable, "\(storage.name) was written and then removed; retry")
        }
        return IdentityRegistry(storage: storage, file: try decode(bytes, from: storage), version: version)
    }

    /// The table in `bytes`, read from `storage`: format 2, or format 1 (converted by the caller).
    private static func decode(_ bytes: [UInt8], from storage: any IdentityStorage) throws -> IdentityFile {
        let file: IdentityFile
        do {
            file = try JSONDecoder().decode(IdentityFile.self, from: Data(bytes))
        } catch {
            throw HealthError(.storageUnavailable, "\(storage.name) is not a valid identity file: \(error)")
        }
        switch file.format {
        case IdentityFile.currentFormat: try file.checkVerifiers(storage.name)
        case 1: break
        default:
            throw HealthError(
                .storageUnavailable,
                "\(storage.name) has format \(file.format); this hkd reads formats 1 and \(IdentityFile.currentFormat)")
        }
        return file
    }

    private static func encode(_ file: IdentityFile) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return Array(try encoder.encode(file))
    }

    /// Reloads a shared table if another node changed it. Throws ``ErrorCode/storageUnavailable`` when it cannot
    /// be read (the table in memory stays as it was).
    public func refresh() throws {
        guard let (bytes, version) = try storage.load() else { return }
        if state.withLock({ $0.version == version }) { return }
        let file = try Self.decode(bytes, from: storage)
        state.withLock { current in
            if version > current.version ?? 0 { current = (file, version) }
        }
    }

    /// Whether the table is shared with other processes (cluster mode): then hkd calls ``refresh()`` now and then.
    public var isShared: Bool { storage.isShared }

    /// The stored identity with token id `id`; in a shared table not holding it, reloaded first (at most every
    /// ``missReloadInterval``), so an identity made on another node is known at once.
    private func stored(id: UInt32) -> StoredIdentity? {
        if let found = state.withLock({ file in file.file.identities.first { $0.id == id } }) { return found }
        guard storage.isShared else { return nil }
        let now = ContinuousClock.now
        let due = lastMissReload.withLock { last in
            guard now - last >= Self.missReloadInterval else { return false }
            last = now
            return true
        }
        guard due, (try? refresh()) != nil else { return nil }
        return state.withLock { file in file.file.identities.first { $0.id == id } }
    }

    /// Creates an admin identity with every grant and writes its token to `tokenPath` (mode 0600).
    private func mintAdmin(named name: String, tokenPath: String, log: (String) -> Void) throws {
        let spec = IdentitySpec(name: name, grants: [TypeGrant(type: "*", share: true, read: true)], isAdmin: true)
        let (_, token) = try create(spec)
        do {
            try FileSystem.writeFileAtomically(tokenPath, Array((token + "\n").utf8), permissions: 0o600)
        } catch {
            throw HealthError(.storageUnavailable, "cannot write \(tokenPath): \(error)")
        }
        log("created the admin identity \(name); its token is in \(tokenPath) (mode 0600)")
    }

    // MARK: Authentication

    /// The salt to challenge token id `id` with, and its verifier. For an id no identity has, a made-up pair
    /// derived from the file's `unknownSaltKey` (the same at every attempt, like a real one; no proof matches
    /// it, and checking one costs what checking a real one does). A revoked identity gets its real salt: the
    /// refusal comes after its proof.
    public func challengeMaterial(for id: UInt32) -> (salt: [UInt8], verifier: TokenVerifier) {
        let found = stored(id: id)
        let saltKey = state.withLock { $0.file.unknownSaltKey }
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
        guard let identity = stored(id: id) else { throw TokenAuthenticator.invalid }
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
        let found = state.withLock { file in file.file.identities.first { $0.id == identity.id } }
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
            return AdminResult(identities: state.withLock { $0.file.identities.map(\.info) })
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

    /// Applies `body` to a copy of the table, stores the copy, then makes it current; a throw changes nothing.
    /// When another node changed a shared table since it was read, `body` runs again on that node's table.
    private func change<Result>(_ body: (inout IdentityFile) throws -> Result) throws -> Result {
        try changing.withLock { _ in
            for _ in 0..<8 {
                var (next, version) = state.withLock { $0 }
                let result = try body(&next)
                if let written = try storage.store(try Self.encode(next), replacing: version) {
                    state.withLock { $0 = (next, written) }
                    return result
                }
                try refresh()
            }
            throw HealthError(.busy, "the identities in \(storage.name) kept changing under this change; retry")
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

extension IdentityRegistry {
    /// The identity whose token `text` is (`hkd1_…`, as an HTTP client sends it after `Bearer`): the token is
    /// checked against the same verifier a handshake's proof is, so a wrong token, an unknown id and a malformed
    /// token are refused alike (``ErrorCode/unauthenticated``); a revoked identity gets ``ErrorCode/tokenRevoked``.
    public func identity(presenting text: String) throws(HealthError) -> ClientIdentity {
        guard let token = AccessToken(text) else { throw TokenAuthenticator.invalid }
        let (salt, verifier) = challengeMaterial(for: token.identityID)
        let presented = TokenVerifier(saltedToken: AccessToken.saltedToken(secret: token.secret, salt: salt))
        guard HMACSHA256.constantTimeEqual(presented.storedKey, verifier.storedKey) else {
            throw TokenAuthenticator.invalid
        }
        return try identity(provenFor: token.identityID)
    }
}
