import HealthModel
import HealthWire

/// The identities, grants and stored samples the authorization tests share, in process (``EmbeddedServer``)
/// and against hkd (``TestServer``), and the rule deciding what each identity must see (HEALTHKIT.md §10).
public enum AuthorizationMatrix {
    public static let t0: Timestamp = 1_704_067_200_000_000  // 2024-01-01T00:00:00Z
    public static let source = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch")

    /// An identity of the matrix: its spec, its token once made, and the rule the server must apply.
    public struct Identity: Sendable {
        public var spec: IdentitySpec
        public var token: String

        public init(spec: IdentitySpec, token: String = "") {
            self.spec = spec
            self.token = token
        }

        /// Whether the identity may access `subject` at all.
        public func allows(subject: String) -> Bool { spec.subjects.isEmpty || spec.subjects.contains(subject) }

        /// Whether a grant of the identity gives `kind` (share or read) for `type`.
        public func can(_ kind: KeyPath<TypeGrant, Bool>, _ type: String) -> Bool {
            spec.grants.contains { ($0.type == "*" || $0.type == type) && $0[keyPath: kind] }
        }
    }

    /// The four identities, the admin (holding `adminToken`) first, then the ones the admin creates: a reader of
    /// anna's steps, a writer of both types for anna and ben who may not read, and a reader of every subject's
    /// heart rate who may not share.
    public static func identities(adminToken: String) -> [Identity] {
        [
            Identity(
                spec: IdentitySpec(
                    name: "admin", grants: [TypeGrant(type: "*", share: true, read: true)], isAdmin: true),
                token: adminToken),
            Identity(
                spec: IdentitySpec(
                    name: "reader", subjects: ["anna"], grants: [TypeGrant(type: "stepCount", share: true, read: true)])
            ),
            Identity(
                spec: IdentitySpec(
                    name: "writer", subjects: ["anna", "ben"],
                    grants: [
                        TypeGrant(type: "stepCount", share: true, read: false),
                        TypeGrant(type: "heartRate", share: true, read: false),
                    ])),
            Identity(
                spec: IdentitySpec(name: "heart", grants: [TypeGrant(type: "heartRate", share: false, read: true)])),
        ]
    }

    /// What is stored, per writer name, subject and type: how many samples, each of `value`.
    public static let stored: [(writer: String, subject: String, type: String, count: Int, value: Double)] = [
        ("admin", "anna", "stepCount", 10, 1), ("admin", "ben", "stepCount", 5, 1),
        ("admin", "anna", "heartRate", 4, 1), ("admin", "ben", "heartRate", 2, 1),
        ("writer", "anna", "stepCount", 3, 100), ("writer", "ben", "heartRate", 2, 100),
    ]

    /// The minute after t0 a writer's samples of ``stored`` start at (the writer's after the admin's).
    public static func offset(of writer: String) -> Int { writer == "admin" ? 0 : 100 }

    /// The samples `identity` must see of `subject`'s `type`: all with read permission, else only its own.
    public static func visible(_ identity: Identity, subject: String, type: String) -> (count: Int, sum: Double) {
        let rows = stored.filter {
            $0.subject == subject && $0.type == type && (identity.can(\.read, type) || $0.writer == identity.spec.name)
        }
        return (rows.reduce(0) { $0 + $1.count }, rows.reduce(0) { $0 + Double($1.count) * $1.value })
    }

    /// `count` samples of `type` for `subject`, one a minute from `offset` minutes after t0, each of `value`.
    public static func samples(_ type: String, subject: String, count: Int, value: Double, offset: Int = 0) throws
        -> [Sample]
    {
        let quantityType = try QuantityType.named(type)
        return (0..<count).map { i in
            let start = t0 + Int64(offset + i) * Micros.minute
            return Sample(
                subject: subject, type: quantityType, start: start, end: start + Micros.minute, value: value,
                unit: quantityType.canonicalUnit, source: source)
        }
    }
}
