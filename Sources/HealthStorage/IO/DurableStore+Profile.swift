import HealthEngine
import HealthModel

// Characteristics and activity summaries (HEALTHKIT.md §13), logged as record kinds 7 and 8.

extension DurableStore {
    /// Sets or clears characteristics of `subject` (see ``HealthStore/setCharacteristics(subject:_:beforeApplying:)``):
    /// logged (record kind 7, normalized) when anything changes, then durable before this returns. Values are checked
    /// against HealthKit's first (``CharacteristicEntry/validated()``); log replay takes what was logged.
    @discardableResult
    public func setCharacteristics(subject: String, _ entries: [CharacteristicEntry]) throws -> Characteristics {
        let checked = try entries.map { try $0.validated() }
        let logged = checked.map { CharacteristicEntry(key: $0.key.rawValue, value: $0.value ?? "") }
        return try self.logged(.characteristics(subject: subject, logged)) { hook in
            try store.setCharacteristics(subject: subject, checked, beforeApplying: hook)
        }
    }

    /// Stores activity summaries of `subject` (see ``HealthStore/insertActivitySummaries(subject:_:beforeApplying:)``):
    /// logged (record kind 8) when any day changes; returns how many did, once durable.
    @discardableResult
    public func insertActivitySummaries(subject: String, _ summaries: [ActivitySummary]) throws -> Int {
        try logged(.activitySummaries(subject: subject, summaries)) { hook in
            try store.insertActivitySummaries(subject: subject, summaries, beforeApplying: hook)
        }
    }
}
