import Foundation
import HealthModel

/// The correlations of every subject (HEALTHKIT.md §13): ``HealthStore/correlations``. Their members are the
/// shards' ordinary samples; this store keeps the correlation objects that name them.
public typealias CorrelationStore = ObjectStore<Correlation>
/// Everything the correlation store holds (Protocol/STORAGE.md, "Correlation snapshot").
public typealias CorrelationImage = ObjectImage<Correlation>

extension Correlation: StorableObject {
    public typealias Filter = CorrelationFilter
    public static var objectName: String { "correlation" }
    public var conflictDescription: String { "\(type.rawValue) at \(start)" }
}

extension CorrelationFilter: ObjectFilter {}

extension ObjectStore where Object == Correlation {
    /// `subject`'s correlations matching `filter` (see ``objects(subject:filter:limit:)``).
    public func correlations(subject: String, filter: CorrelationFilter = CorrelationFilter(), limit: Int = 0) throws
        -> ObjectQueryResult<Correlation>
    {
        try objects(subject: subject, filter: filter, limit: limit)
    }
}
