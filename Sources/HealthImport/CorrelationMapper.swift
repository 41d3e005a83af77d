import HealthModel

/// Turns an export's `<Correlation>` element and its children into a ``Correlation`` (HEALTHKIT.md §13): the
/// type, interval, source, `<MetadataEntry>` and, per member `<Record>`, the UUID its sample has (the same content
/// identity the top-level copy of the record gets, so the member names the sample imported once from there). The
/// correlation's UUID is the identity of its whole element (``ElementIdentity``): importing again adds nothing.
/// Not thread-safe.
enum CorrelationMapper {
    /// The correlation of a `<Correlation>` element's attributes (members still to come), or why it is rejected.
    static func correlation(_ attributes: [XMLAttribute]) throws -> Correlation {
        let fields = WorkoutMapper.strings(attributes)
        let typeName = try WorkoutMapper.require(fields, "type", of: "correlation")
        guard let type = CorrelationType(named: typeName) else {
            throw Rejection("unknown correlation type", "unknown correlation type \"\(typeName.prefix(60))\"")
        }
        let start = try WorkoutMapper.date(fields, "startDate", of: "correlation")
        let end = try WorkoutMapper.date(fields, "endDate", of: "correlation")
        let source = SourceInfo(
            name: try WorkoutMapper.require(fields, "sourceName", of: "correlation"),
            version: fields["sourceVersion"] ?? "", device: fields["device"].map(WorkoutMapper.deviceShortForm) ?? "")
        return Correlation(type: type, start: start, end: end, source: source, members: [])
    }

    /// Adds a `<MetadataEntry>` child to `correlation`, as ``RecordMapper/addMetadata(_:to:)`` does to a record.
    static func addMetadata(_ attributes: [XMLAttribute], to correlation: inout Correlation) -> MetadataEntryOutcome {
        let fields = WorkoutMapper.strings(attributes)
        return .add(fields["key"], fields["value"].map(WorkoutMapper.metadataValue), to: &correlation.metadata)
    }

    /// Adds the sample a member `<Record>` maps to. Returns `false` past ``Correlation/Limits/maxMembers``, not
    /// kept: the caller rejects the correlation.
    @discardableResult
    static func add(member sample: PendingSample, to correlation: inout Correlation) -> Bool {
        guard correlation.members.count < Correlation.Limits.maxMembers else { return false }
        correlation.members.append(CorrelationMember(uuid: sample.uuid, type: sample.type))
        return true
    }

    /// The finished correlation, named by the identity of its whole element (``ElementIdentity``), checked
    /// (``Correlation/validate()``).
    static func finish(_ pending: Correlation, identity: ElementIdentity) throws -> Correlation {
        var correlation = pending
        correlation.uuid = identity.uuid(base: correlation.contentHash)
        do {
            try correlation.validate()
        } catch let error as HealthError {
            throw Rejection("correlation is not valid", error.message)
        }
        return correlation
    }
}
