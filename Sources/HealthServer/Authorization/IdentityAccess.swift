import HealthModel
import HealthWire

/// What one identity may do, as of the request being served (HEALTHKIT.md §10). Values, thread-safe.
///
/// Share (write) and read are separate per type; a grant for type `*` covers every type; grants add up.
/// Without read permission a type's queries see only the identity's own samples (``readFilter(_:subject:type:)``):
/// every read path, including future ones such as change and subscription queries, must go through it.
public struct IdentityAccess: Hashable, Sendable {
    /// The identity's writer id: it marks the samples it inserts.
    public var id: UInt32
    public var name: String
    /// `nil`: every subject.
    public var subjects: Set<String>?
    public var grants: [TypeGrant]
    public var isAdmin: Bool

    /// Access from its parts.
    public init(id: UInt32, name: String, subjects: Set<String>?, grants: [TypeGrant], isAdmin: Bool) {
        self.id = id
        self.name = name
        self.subjects = subjects
        self.grants = grants
        self.isAdmin = isAdmin
    }

    /// Whether the identity may write (insert, delete its own samples) samples of `type`.
    public func canShare(_ type: QuantityType) -> Bool {
        grants.contains { $0.share && ($0.type == "*" || $0.type == type.identifier) }
    }

    /// Whether the identity may read every sample of `type` (not only its own).
    public func canRead(_ type: QuantityType) -> Bool {
        grants.contains { $0.read && ($0.type == "*" || $0.type == type.identifier) }
    }

    /// HealthKit's authorization status: about sharing only. Authorized with a share grant; denied when a grant
    /// names the type (or `*`) without share; not determined when no grant mentions it.
    public func sharingStatus(_ type: QuantityType, subject: String = "") -> AuthorizationState {
        sharingStatus(identifier: type.identifier, subject: subject)
    }

    /// ``sharingStatus(_:subject:)`` for a type named by its grant identifier: a quantity or category type's, or
    /// `workout`, `characteristics`, `activitySummary` (HEALTHKIT.md §13).
    public func sharingStatus(identifier: String, subject: String = "") -> AuthorizationState {
        // A subject outside the identity's: it may write nothing there.
        if !subject.isEmpty, let subjects, !subjects.contains(subject) { return .sharingDenied }
        let named = grants.filter { $0.type == "*" || $0.type == identifier }
        if named.contains(where: \.share) { return .sharingAuthorized }
        return named.isEmpty ? .notDetermined : .sharingDenied
    }

    /// The grant identifier of a type name: `workout`, `characteristics`, `activitySummary`, `bloodPressure` or
    /// `food` (any of their names), else the quantity or category type's; throws
    /// ``ErrorCode/unknownQuantityType`` for another name.
    public static func grantIdentifier(_ name: String) throws -> String {
        if WorkoutType.matches(name) { return WorkoutType.identifier }
        if let profile = ProfileType.named(name) { return profile.identifier }
        if let correlation = CorrelationType(named: name) { return correlation.rawValue }
        return try QuantityType.named(name).identifier
    }

    /// Throws ``ErrorCode/forbidden`` unless the identity may touch `subject`.
    public func checkSubject(_ subject: String) throws {
        if let subjects, !subjects.contains(subject) {
            throw HealthError(.forbidden, "identity \"\(name)\" may not access subject \"\(subject)\"")
        }
    }

    /// Throws ``ErrorCode/forbidden`` unless the identity may write `type` for `subject`.
    public func checkShare(subject: String, type: QuantityType) throws {
        try checkSubject(subject)
        guard canShare(type) else {
            throw HealthError(.forbidden, "identity \"\(name)\" has no share permission for \(type.identifier)")
        }
    }

    /// `filter` narrowed to what the identity may read of `type` for `subject`: unchanged with a read grant,
    /// otherwise only the identity's own samples (the HealthKit rule: nothing tells the caller more exists).
    /// Throws ``ErrorCode/forbidden`` for a subject outside the identity's subjects.
    public func readFilter(_ filter: SampleFilter, subject: String, type: QuantityType) throws -> SampleFilter {
        try checkSubject(subject)
        if canRead(type) { return filter }
        var narrowed = filter
        narrowed.writer = id
        return narrowed
    }

    /// `filter` narrowed to what the identity may delete: only its own samples (admins: any sample).
    public func deleteFilter(_ filter: SampleFilter, subject: String, type: QuantityType) throws -> SampleFilter {
        try checkShare(subject: subject, type: type)
        if isAdmin { return filter }
        var narrowed = filter
        narrowed.writer = id
        return narrowed
    }

    /// Throws ``ErrorCode/forbidden`` unless the identity is an administrator.
    public func checkAdmin(_ what: String) throws {
        guard isAdmin else { throw HealthError(.forbidden, "identity \"\(name)\" may not \(what): it is not an admin") }
    }
}
