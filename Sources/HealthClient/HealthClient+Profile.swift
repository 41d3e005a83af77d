import HealthModel
import HealthWire

// Characteristics and activity summaries (HEALTHKIT.md §13): per subject on the server, `characteristics` and
// `activitySummary` as types for grants.

extension HealthClient {
    /// HealthKit's characteristic query: `subject`'s characteristics (empty when none is set). Needs the read
    /// grant for `characteristics`.
    public func characteristics(subject: String) async throws(HealthClientError) -> Characteristics {
        try await send(CharacteristicsQuery(subject: subject)).characteristics
    }

    /// Sets `subject`'s characteristics to the values of `characteristics` (keys it does not set are left as
    /// they are); returns the characteristics afterwards. Needs the share grant for `characteristics` (or an
    /// administrator).
    @discardableResult
    public func setCharacteristics(_ characteristics: Characteristics, subject: String) async throws(HealthClientError)
        -> Characteristics
    {
        try await setCharacteristics(CharacteristicEntry.entries(of: characteristics), subject: subject)
    }

    /// Sets (a value in short or export form) or clears (an empty value) characteristics of `subject`, in order;
    /// returns the characteristics afterwards. An unknown key or invalid value is refused with
    /// `invalidArgument` before anything changes.
    @discardableResult
    public func setCharacteristics(_ entries: [CharacteristicEntry], subject: String) async throws(HealthClientError)
        -> Characteristics
    {
        try await send(CharacteristicsSet(subject: subject, entries: entries)).characteristics
    }

    /// Stores activity summaries for `subject`, each replacing the one of its day (all or none); the reply counts
    /// the days that changed and those already stored as sent. Needs the share grant for `activitySummary`.
    public func insertActivitySummaries(_ summaries: [ActivitySummary], subject: String)
        async throws(HealthClientError) -> ActivitySummaryInsertAck
    {
        try await send(ActivitySummaryInsert(subject: subject, summaries: summaries))
    }

    /// `subject`'s activity summaries by day, from day `first` through day `last` (day numbers of
    /// ``CivilCalendar``, both included; `nil`: open). Needs the read grant for `activitySummary`.
    public func activitySummaries(subject: String, from first: Int? = nil, through last: Int? = nil)
        async throws(HealthClientError) -> [ActivitySummary]
    {
        try await send(ActivitySummaryQuery(subject: subject, first: first, last: last)).summaries
    }
}
