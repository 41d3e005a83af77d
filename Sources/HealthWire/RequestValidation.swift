import HealthModel

/// Checks of a decoded request that need the catalog and the unit parser, made before any work is queued:
/// the type exists, units parse and fit it, predicates and options are valid, a category batch's values are in its
/// type's enumeration. The other row-level sample rules are the engine's.
extension Message {
    /// Throws the ``HealthError`` the request deserves (``ErrorCode/unknownQuantityType``,
    /// ``ErrorCode/invalidUnit``, ``ErrorCode/incompatibleUnit``, ``ErrorCode/invalidPredicate``,
    /// ``ErrorCode/invalidOptions``, ``ErrorCode/invalidInterval``, ``ErrorCode/invalidArgument``…).
    public func validateRequest() throws(HealthError) {
        do {
            switch self {
            case .insert(let m):
                let type = try QuantityType.named(m.batch.typeIdentifier)
                try Self.validate(unit: m.batch.unit, for: type, allowEmpty: false)
                try SampleRules.validate(subject: m.batch.subject)
                try m.batch.validateShape()
                if type.isCategory {
                    for (row, value) in m.batch.values.enumerated() {
                        do {
                            try SampleRules.validate(categoryValue: value, type: type)
                        } catch let error as HealthError {
                            throw HealthError(error.code, "batch \(m.batch.batchID) row \(row): \(error.message)")
                        }
                    }
                }
            case .delete(let m):
                let type = try Self.validate(subject: m.subject, type: m.type)
                if case .filter(let filter) = m.selection { _ = try filter.validated(for: type) }
            case .sampleQuery(let m):
                let type = try Self.validate(subject: m.subject, type: m.type)
                try Self.validate(unit: m.unit, for: type, allowEmpty: true)
                _ = try m.filter.validated(for: type)
            case .statisticsQuery(let m):
                let type = try Self.validate(subject: m.subject, type: m.type)
                try Self.validate(unit: m.unit, for: type, allowEmpty: true)
                _ = try m.filter.validated(for: type)
                try m.options.validate(for: type)
            case .collectionQuery(let m):
                try Self.validate(collection: m)
            case .changesQuery(let m):
                let type = try Self.validate(subject: m.subject, type: m.type)
                try Self.validate(unit: m.unit, for: type, allowEmpty: true)
                _ = try m.filter.validated(for: type)
            case .subscribe(let m):
                switch m.request {
                case .observer(let subject, let type, let filter):
                    _ = try filter.validated(for: try Self.validate(subject: subject, type: type))
                case .anchored(let query): try Message.changesQuery(query).validateRequest()
                case .collection(let query): try Self.validate(collection: query)
                }
            case .getSourcePriority(let m): try Self.validate(subject: m.subject, type: m.type)
            case .setSourcePriority(let m): try Self.validate(subject: m.subject, type: m.type)
            case .workoutInsert(let m):
                try SampleRules.validate(subject: m.subject)
                for workout in m.workouts { try workout.validate() }
            case .workoutQuery(let m): try SampleRules.validate(subject: m.subject)
            case .workoutDelete(let m): try SampleRules.validate(subject: m.subject)
            case .characteristicsSet(let m):
                try SampleRules.validate(subject: m.subject)
                for entry in m.entries { _ = try entry.validated() }
            case .characteristicsQuery(let m): try SampleRules.validate(subject: m.subject)
            case .activitySummaryInsert(let m):
                try SampleRules.validate(subject: m.subject)
                for summary in m.summaries { try summary.validate() }
            case .activitySummaryQuery(let m): try SampleRules.validate(subject: m.subject)
            case .correlationInsert(let m):
                try SampleRules.validate(subject: m.subject)
                for correlation in m.correlations { try correlation.validate() }
            case .correlationQuery(let m): try SampleRules.validate(subject: m.subject)
            case .correlationDelete(let m): try SampleRules.validate(subject: m.subject)
            case .routeInsert(let m):
                try SampleRules.validate(subject: m.subject)
                for route in m.routes { try route.validate() }
            case .routeQuery(let m): try SampleRules.validate(subject: m.subject)
            default: break
            }
        } catch let error as HealthError {
            throw error
        } catch {
            throw HealthError(.internalError, "validation failed: \(error)")
        }
    }

    @discardableResult
    private static func validate(subject: String, type: String) throws -> QuantityType {
        try SampleRules.validate(subject: subject)
        return try QuantityType.named(type)
    }

    private static func validate(unit: String, for type: QuantityType, allowEmpty: Bool) throws {
        if allowEmpty, unit.isEmpty { return }
        _ = try type.unit(parsing: unit)
    }

    private static func validate(collection m: CollectionQuery) throws {
        let type = try validate(subject: m.subject, type: m.type)
        try validate(unit: m.unit, for: type, allowEmpty: true)
        _ = try m.filter.validated(for: type)
        try m.options.validate(for: type)
        try m.interval.validate()
        if m.timeZone.isEmpty {
            throw HealthError(.invalidTimeZone, "the time zone is empty (send an IANA id such as Europe/Berlin)")
        }
        if let from = m.enumerateFrom, let to = m.enumerateTo, to < from {
            throw HealthError(.invalidPredicate, "the enumeration ends (\(to)) before it starts (\(from))")
        }
    }
}
