import HealthModel

/// The sources of one series (one subject and type): a table the source column points into, and their priority.
///
/// Two revisions of one app or device (same bundle identifier, or same name when it has none, different version
/// or device string) are distinct rows of the table but one *identity*: statistics, merging and priority work on
/// identities, so an app never de-duplicates against its own older version.
struct SeriesSources: Sendable {
    /// Most distinct sources one series can hold (the source column is 16 bits wide).
    static let capacity = Int(UInt16.max) + 1

    /// One app or device across its revisions.
    struct Identity: Sendable {
        /// Bundle identifier, or name when there is none.
        var key: String
        /// The most recently registered revision, used when the identity is reported.
        var latest: SourceInfo
        /// Whether any of its samples carried `HKMetadataKeyWasUserEntered`.
        var userEntered: Bool
        /// Apple devices and apps (bundle identifier `com.apple…`).
        var isApple: Bool { latest.bundleIdentifier.hasPrefix("com.apple") }
    }

    /// Source id (the value stored in the source column) → revision.
    private(set) var infos: [SourceInfo] = []
    /// Source id → index into ``identities``.
    private(set) var identityOfSource: [Int] = []
    /// Identities in the order they were first seen.
    private(set) var identities: [Identity] = []
    /// An order set by ``setPriority(_:)``; sources it does not list rank after it in the default order.
    private(set) var explicitOrder: [SourceInfo]?
    private var idOfInfo: [SourceInfo: UInt16] = [:]
    private var identityOfKey: [String: Int] = [:]

    /// The identity key of a source: bundle identifier, or name when there is none.
    static func identityKey(_ info: SourceInfo) -> String {
        info.bundleIdentifier.isEmpty ? "name:" + info.name : "bundle:" + info.bundleIdentifier
    }

    var count: Int { infos.count }

    /// The id of a source already in the table.
    func id(of info: SourceInfo) -> UInt16? { idOfInfo[info] }

    /// How many of `infos` are not in the table yet (each counted once).
    func newSourceCount(_ infos: some Sequence<SourceInfo>) -> Int {
        Set(infos.filter { idOfInfo[$0] == nil }).count
    }

    /// The id of `info`, adding it when new; marks its identity user-entered when `userEntered`.
    /// The caller checks ``capacity`` first with ``newSourceCount(_:)``.
    mutating func intern(_ info: SourceInfo, userEntered: Bool) -> UInt16 {
        let id: UInt16
        if let existing = idOfInfo[info] {
            id = existing
        } else {
            precondition(infos.count < SeriesSources.capacity, "source table full")
            id = UInt16(infos.count)
            infos.append(info)
            idOfInfo[info] = id
            let key = SeriesSources.identityKey(info)
            if let identity = identityOfKey[key] {
                identities[identity].latest = info
                identityOfSource.append(identity)
            } else {
                identityOfKey[key] = identities.count
                identityOfSource.append(identities.count)
                identities.append(Identity(key: key, latest: info, userEntered: false))
            }
        }
        if userEntered { identities[identityOfSource[Int(id)]].userEntered = true }
        return id
    }

    /// Whether the identity of source `id` entered samples by hand.
    func isUserEntered(id: Int) -> Bool { identities[identityOfSource[id]].userEntered }

    /// Replaces the priority order (highest first); sources it does not list keep the default order after it.
    mutating func setPriority(_ order: [SourceInfo]) { explicitOrder = order }

    /// Identity indices, highest priority first: the explicit order, then the default one (HEALTHKIT.md §8):
    /// user-entered sources, then Apple devices and apps (both in first-seen order), then the others with the
    /// most recently seen first.
    func identitiesByPriority() -> [Int] {
        var placed = [Bool](repeating: false, count: identities.count)
        var order: [Int] = []
        order.reserveCapacity(identities.count)
        for info in explicitOrder ?? [] {
            if let identity = identityOfKey[SeriesSources.identityKey(info)], !placed[identity] {
                placed[identity] = true
                order.append(identity)
            }
        }
        let rest = identities.indices.filter { !placed[$0] }
        order += rest.filter { identities[$0].userEntered }
        order += rest.filter { !identities[$0].userEntered && identities[$0].isApple }
        order += rest.filter { !identities[$0].userEntered && !identities[$0].isApple }.reversed()
        return order
    }

    /// Rank of each identity (0 is the highest priority), indexed like ``identities``.
    func identityRanks() -> [Int] {
        var ranks = [Int](repeating: 0, count: identities.count)
        for (rank, identity) in identitiesByPriority().enumerated() { ranks[identity] = rank }
        return ranks
    }

    /// Rank of each source id's identity, indexed by source id.
    func sourceRanks() -> [Int] {
        let ranks = identityRanks()
        return identityOfSource.map { ranks[$0] }
    }

    /// The effective priority list, highest first: every known identity (its latest revision), plus the sources
    /// of an explicit order that have not written samples yet, in their place in that order.
    func priorityList() -> [SourceInfo] {
        var result: [SourceInfo] = []
        var listedKeys = Set<String>()
        for info in explicitOrder ?? [] where listedKeys.insert(SeriesSources.identityKey(info)).inserted {
            let identity = identityOfKey[SeriesSources.identityKey(info)]
            result.append(identity.map { identities[$0].latest } ?? info)
        }
        for identity in identitiesByPriority() where !listedKeys.contains(identities[identity].key) {
            result.append(identities[identity].latest)
        }
        return result
    }

    /// Rough heap bytes of the table, for ``StoreInfo``.
    var approximateBytes: Int {
        infos.reduce(0) { $0 + 96 + $1.name.utf8.count + $1.bundleIdentifier.utf8.count } + identities.count * 64
    }
}
