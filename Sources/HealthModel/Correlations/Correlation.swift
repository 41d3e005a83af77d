import Foundation

/// One member of a correlation: the UUID of a quantity sample stored as an ordinary sample, and its type.
public struct CorrelationMember: Hashable, Sendable {
    public var uuid: UUID
    public var type: QuantityType

    /// A member from its parts.
    public init(uuid: UUID, type: QuantityType) {
        self.uuid = uuid
        self.type = type
    }
}

/// One correlation: HealthKit's `HKCorrelation` for one subject (HEALTHKIT.md §13), a blood pressure reading or a
/// food. It names its members by UUID: they are ordinary quantity samples, stored, queried and counted as such
/// (a correlation adds no sample); the correlation keeps its own UUID, interval, source and metadata.
public struct Correlation: Hashable, Sendable {
    /// Unique per subject; re-sending the same UUID with the same content is a no-op.
    public var uuid: UUID
    public var type: CorrelationType
    public var start: Timestamp
    public var end: Timestamp
    public var source: SourceInfo
    public var metadata: [String: MetadataValue]
    /// The member samples, in the order given (blood pressure: systolic and diastolic).
    public var members: [CorrelationMember]

    /// A correlation; the UUID defaults to the content identity (``contentID``).
    public init(
        uuid: UUID? = nil, type: CorrelationType, start: Timestamp, end: Timestamp, source: SourceInfo,
        metadata: [String: MetadataValue] = [:], members: [CorrelationMember]
    ) {
        self.type = type
        self.start = start
        self.end = end
        self.source = source
        self.metadata = metadata
        self.members = members
        self.uuid = UUID()
        self.uuid = uuid ?? contentID
    }

    /// The content identity (as ``Sample/stableID(type:start:end:value:unit:source:)`` for samples): a version-8
    /// UUID of the source name, the correlation type, start and end, so an export imported again names the same
    /// correlations.
    public var contentID: UUID { contentHash.uuid }

    /// The hash state ``contentID`` turns into its UUID: the base of an exported correlation's identity (the importer
    /// continues it with the element's whole content).
    package var contentHash: ContentHash128 {
        SampleContentIdentity.hash(
            sourceName: Array(source.name.utf8), typeIdentifier: Array("correlation.\(type.rawValue)".utf8),
            start: start, end: end,
            canonicalValue: 0)
    }

    /// The member of type `identifier` (`bloodPressureSystolic`), the first when there are several.
    public func member(_ identifier: String) -> CorrelationMember? {
        members.first { $0.type.identifier == identifier }
    }

    /// Limits a correlation must keep.
    public enum Limits {
        /// Members of one correlation (a food names at most this many nutrients).
        public static let maxMembers = 256
    }

    /// Throws ``ErrorCode/invalidSample`` naming the correlation when it breaks a rule: instants within
    /// ``SupportedInstants``, start ≤ end, members of the type's member types with distinct UUIDs (a blood pressure
    /// has exactly one systolic and one diastolic member, a food 1 to ``Limits/maxMembers`` dietary ones).
    public func validate() throws {
        func fail(_ why: String) -> HealthError {
            HealthError(.invalidSample, "correlation \(uuid) (\(type.rawValue)): \(why)")
        }
        guard SupportedInstants.contains(start), SupportedInstants.contains(end) else {
            throw fail("its instants lie outside \(SupportedInstants.description)")
        }
        guard start <= end else { throw fail("it ends before it starts") }
        guard !members.isEmpty, members.count <= Limits.maxMembers else {
            throw fail("it has \(members.count) members; 1 to \(Limits.maxMembers)")
        }
        guard Set(members.map(\.uuid)).count == members.count else { throw fail("a member UUID appears twice") }
        let allowed = Set(type.members.map(\.identifier))
        if let stranger = members.first(where: { !allowed.contains($0.type.identifier) }) {
            throw fail("a member of type \(stranger.type.identifier) does not belong to it")
        }
        if type == .bloodPressure {
            let types = members.map(\.type.identifier).sorted()
            guard types == ["bloodPressureDiastolic", "bloodPressureSystolic"] else {
                throw fail("a blood pressure has one systolic and one diastolic member")
            }
        }
    }
}
