import HealthCodec
import HealthModel

/// Share (write) and read permission for one quantity type, or for every type with `type == "*"`.
public struct TypeGrant: Hashable, Sendable {
    public var type: String
    public var share: Bool
    public var read: Bool

    public init(type: String, share: Bool, read: Bool) {
        self.type = type
        self.share = share
        self.read = read
    }
}

/// A client identity: who it is, which subjects it may touch, and its grants per type (HEALTHKIT.md §10).
public struct IdentitySpec: Hashable, Sendable {
    public var name: String
    /// Subjects the identity may touch; empty means every subject.
    public var subjects: [String]
    public var grants: [TypeGrant]
    /// Whether the identity may administer identities.
    public var isAdmin: Bool

    public init(name: String, subjects: [String] = [], grants: [TypeGrant] = [], isAdmin: Bool = false) {
        self.name = name
        self.subjects = subjects
        self.grants = grants
        self.isAdmin = isAdmin
    }
}

/// An identity as the server lists it (never with its token).
public struct IdentityInfo: Hashable, Sendable {
    public var spec: IdentitySpec
    public var createdAt: Timestamp
    public var revoked: Bool

    public init(spec: IdentitySpec, createdAt: Timestamp, revoked: Bool) {
        self.spec = spec
        self.createdAt = createdAt
        self.revoked = revoked
    }
}

/// An administration operation on identities.
public enum AdminOperation: Hashable, Sendable {
    /// Creates an identity; the result carries its token, shown this once.
    case create(IdentitySpec)
    case list
    /// Replaces the subjects, grants and admin flag of the identity with the spec's name.
    case update(IdentitySpec)
    /// Revokes the named identity; its token fails on the next request, open connections included.
    case revoke(name: String)
}

/// An administration request; only admin identities may send it. Answered by ``AdminResult``.
public struct AdminRequest: WireMessage {
    public static let kind = MessageKind.adminRequest
    public var operation: AdminOperation

    public init(_ operation: AdminOperation) { self.operation = operation }

    public func encode(into w: inout ByteWriter) {
        switch operation {
        case .create(let spec):
            w.write(0)
            w.writeIdentity(spec)
        case .list:
            w.write(1)
        case .update(let spec):
            w.write(2)
            w.writeIdentity(spec)
        case .revoke(let name):
            w.write(3)
            w.writeString(name)
        }
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        switch try r.readByte() {
        case 0: operation = .create(try r.readIdentity(limits))
        case 1: operation = .list
        case 2: operation = .update(try r.readIdentity(limits))
        case 3: operation = .revoke(name: try r.readString(limits))
        case let other: throw CodecError(.malformedPayload, "unknown admin operation \(other)")
        }
    }
}

/// The answer to an ``AdminRequest``: the identities concerned, and for `create` the new token.
public struct AdminResult: WireMessage {
    public static let kind = MessageKind.adminResult
    public var identities: [IdentityInfo]
    /// The new identity's token after `create`; empty otherwise.
    public var token: String

    public init(identities: [IdentityInfo], token: String = "") {
        self.identities = identities
        self.token = token
    }

    public func encode(into w: inout ByteWriter) {
        w.writeVarint(UInt64(identities.count))
        for identity in identities {
            w.writeIdentity(identity.spec)
            w.writeTimestamp(identity.createdAt)
            w.writeBool(identity.revoked)
        }
        w.writeString(token)
    }

    public init(from r: inout ByteReader, limits: MessageLimits) throws {
        let count = try r.readListCount("identity", limits: limits, minBytes: 6)
        var identities: [IdentityInfo] = []
        identities.reserveCapacity(count)
        for _ in 0..<count {
            identities.append(
                IdentityInfo(
                    spec: try r.readIdentity(limits), createdAt: try r.readTimestamp(), revoked: try r.readBool()))
        }
        self.identities = identities
        token = try r.readString(limits)
    }
}

extension ByteWriter {
    mutating func writeIdentity(_ spec: IdentitySpec) {
        writeString(spec.name)
        writeStrings(spec.subjects)
        writeVarint(UInt64(spec.grants.count))
        for grant in spec.grants {
            writeString(grant.type)
            write((grant.share ? 1 : 0) | (grant.read ? 2 : 0))
        }
        writeBool(spec.isAdmin)
    }
}

extension ByteReader {
    mutating func readIdentity(_ limits: MessageLimits) throws -> IdentitySpec {
        let name = try readString(limits)
        let subjects = try readStrings("subject", limits: limits)
        let count = try readListCount("grant", limits: limits, minBytes: 2)
        var grants: [TypeGrant] = []
        grants.reserveCapacity(count)
        for _ in 0..<count {
            let type = try readString(limits)
            let bits = try readByte()
            guard bits & ~0b11 == 0 else { throw CodecError(.malformedPayload, "unknown grant bits 0x\(hex(bits))") }
            grants.append(TypeGrant(type: type, share: bits & 1 != 0, read: bits & 2 != 0))
        }
        return IdentitySpec(name: name, subjects: subjects, grants: grants, isAdmin: try readBool())
    }
}
