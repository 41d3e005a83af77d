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
        /// Whether a sample of it marked as entered by hand (``marksUserEntered(_:)``) was ever stored in the
        /// series; it stays set when such samples are deleted.
        var userEntered: Bool
        /// The person's own Apple devices and Apple's apps: a bundle identifier `com.apple…`, an Apple hardware
        /// model as the device (`iPhone14,2`, `Watch6,2`, `iPad13,1`, `iPod9,1`: exports name devices so), or,
        /// for export records that carry neither, a name ending in iPhone, Apple Watch or iPad ("Anna’s iPhone").
        var isApple: Bool { SeriesSources.isApple(latest) }
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

    /// Whether `info` is one of the person's own Apple devices or an Apple app (see ``Identity/isApple``).
    static func isApple(_ info: SourceInfo) -> Bool {
        if info.bundleIdentifier.hasPrefix("com.apple") { return true }
        for model in ["iPhone", "Watch", "iPad", "iPod"] where info.device.hasPrefix(model) {
            let rest = info.device.dropFirst(model.count)
            if let comma = rest.firstIndex(of: ","), !rest[..<comma].isEmpty,
                rest[..<comma].allSatisfy(\.isNumber), rest[rest.index(after: comma)...].allSatisfy(\.isNumber)
            {
                return true
            }
        }
        guard info.bundleIdentifier.isEmpty, info.device.isEmpty || info.device.hasPrefix("<<HKDevice") else {
            return false
        }
        return ["iPhone", "Apple Watch", "iPad"].contains { info.name.hasSuffix($0) }
    }

    /// Whether a sample's metadata marks it as entered by hand (HEALTHKIT.md §8): `HKWasUserEntered` (HealthKit's
    /// `HKMetadataKeyWasUserEntered`, as apps store it and exports write it) or the long form
    /// `HKMetadataKeyWasUserEntered` (``MetadataKey/wasUserEnteredLongForm``), holding a non-zero number or the
    /// string `1`, `true` or `yes` in any case. Rows without metadata are never looked at.
    static func marksUserEntered(_ metadata: [String: MetadataValue]) -> Bool {
        marksUserEntered(metadata[MetadataKey.wasUserEntered])
            || marksUserEntered(metadata[MetadataKey.wasUserEnteredLongForm])
    }

    private static func marksUserEntered(_ value: MetadataValue?) -> Bool {
        switch value {
        case .number(let flag): flag != 0 && !flag.isNaN
        case .string(let flag): ["1", "true", "yes"].contains(flag.lowercased())
        case .date, .quantity, nil: false
        }
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

    /// Marks the identity of source `id` (in the table) as having entered samples by hand.
    mutating func markUserEntered(id: Int) { identities[identityOfSource[id]].userEntered = true }

    /// Puts the sources of `order` first (highest first); the sources it does not list keep their current order
    /// after it (they do not fall back to the default order). Sources seen later rank after all of them, in the
    /// default order.
    mutating func setPriority(_ order: [SourceInfo]) {
        let listed = Set(order.map(SeriesSources.identityKey))
        explicitOrder = order + priorityList().filter { !listed.contains(SeriesSources.identityKey($0)) }
    }

    /// Restores an order exactly as stored (a snapshot), without merging the current one into it.
    mutating func restorePriority(_ order: [SourceInfo]) { explicitOrder = order }

    /// Identity indices, highest priority first: the explicit order, then the default one (HEALTHKIT.md §8):
    /// identities that stored a user-entered sample of the type (``Identity/userEntered``), then Apple devices and
    /// apps (both in first-seen order), then the others with the most recently seen first. Computed from the flags
    /// each time it is asked for, so a source's first manual sample moves it up at once.
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
