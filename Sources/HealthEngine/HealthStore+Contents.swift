import HealthModel

/// What a group of subjects holds: the subjects with samples and the samples per type.
public struct StoreContents: Hashable, Sendable, Codable {
    /// Distinct subjects with at least one stored sample.
    public var subjects: Int
    /// Stored samples per type (short identifier); types without samples are absent.
    public var samplesByType: [String: Int]

    public init(subjects: Int = 0, samplesByType: [String: Int] = [:]) {
        self.subjects = subjects
        self.samplesByType = samplesByType
    }

    /// The contents of two disjoint groups together.
    public mutating func add(_ other: StoreContents) {
        subjects += other.subjects
        samplesByType.merge(other.samplesByType, uniquingKeysWith: +)
    }
}

extension HealthStore {
    /// The contents per group of subjects (cluster mode: per partition), `group` naming each subject's; groups
    /// holding nothing are absent.
    public func contents(groupedBy group: (String) -> Int) -> [Int: StoreContents] {
        var samples: [Int: [String: Int]] = [:]
        var subjects: [Int: Set<String>] = [:]
        for type in QuantityType.all {
            shard(type).read { state in
                for (subject, series) in state.series where series.count > 0 {
                    let index = group(subject)
                    samples[index, default: [:]][type.identifier, default: 0] += series.count
                    subjects[index, default: []].insert(subject)
                }
            }
        }
        return samples.reduce(into: [:]) { result, entry in
            result[entry.key] = StoreContents(subjects: subjects[entry.key]?.count ?? 0, samplesByType: entry.value)
        }
    }
}
