import HealthModel
import Synchronization

/// When a query last read a series, as an epoch of the usage clock: a mover's listing of the hot blocks
/// (``HealthStore/hotBlocks()``) starts a new epoch, so the series read since then count as more recent than
/// those read before. A query only loads the epoch (shared, read-mostly) and stores it into the series when it
/// changed: no contended read-modify-write per query, and nothing written while a series is read again and again.
final class SeriesUsage: Sendable {
    private let tick = Atomic<UInt64>(0)

    /// Stamps the series as read in the current epoch.
    @inline(__always)
    func touch() {
        let now = Self.epoch.load(ordering: .relaxed)
        if tick.load(ordering: .relaxed) != now { tick.store(now, ordering: .relaxed) }
    }

    /// The epoch of the last read (0: never read).
    var lastUse: UInt64 { tick.load(ordering: .relaxed) }

    /// Starts a new epoch: reads from now on count as more recent than every read before.
    static func startEpoch() { epoch.add(1, ordering: .relaxed) }

    /// The current epoch, shared by every store (it only grows); 1 at start, so a read series is never 0.
    private static let epoch = Atomic<UInt64>(1)
}

/// The sealed blocks of one series that are in memory: what a mover may write out and map back
/// (``HealthStore/hotBlocks()``, ``HealthStore/replaceBlocks(_:)``).
public struct HotBlocks: Sendable {
    public var type: QuantityType
    public var subject: String
    /// The series' usage epoch when listed (larger: read more recently; 0: never read since start-up).
    public var lastUse: UInt64
    /// The blocks in memory, with their index in the series, in start order.
    public var blocks: [(index: Int, block: SealedBlock)]
}

/// How much of the sealed blocks' encodings is in memory and how much in cold memory (``BlockMemory``).
public struct BlockResidency: Hashable, Sendable {
    public var hotBytes = 0
    public var coldBytes = 0
    public var hotBlocks = 0
    public var coldBlocks = 0

    /// No blocks.
    public init() {}
}

extension HealthStore {
    /// The bytes and counts of hot and cold sealed blocks over every shard (each read-locked in turn).
    public func blockResidency() -> BlockResidency {
        var residency = BlockResidency()
        for type in QuantityType.all {
            shard(type).read { state in
                for series in state.series.values {
                    for block in series.rows.blocks {
                        if block.isCold {
                            residency.coldBytes += block.byteCount
                            residency.coldBlocks += 1
                        } else {
                            residency.hotBytes += block.byteCount
                            residency.hotBlocks += 1
                        }
                    }
                }
            }
        }
        return residency
    }

    /// Every series' hot sealed blocks (the head is not a sealed block: it stays), each shard read-locked in
    /// turn; blocks are shared copy-on-write, so the list costs no copy of their bytes. Starts a new usage
    /// epoch: series read after the listing count as more recent than any it saw.
    public func hotBlocks() -> [HotBlocks] {
        SeriesUsage.startEpoch()
        var found: [HotBlocks] = []
        for type in QuantityType.all {
            shard(type).read { state in
                for (subject, series) in state.series {
                    let hot = series.rows.blocks.enumerated().filter { !$0.element.isCold }.map {
                        (index: $0.offset, block: $0.element)
                    }
                    if !hot.isEmpty {
                        found.append(
                            HotBlocks(type: type, subject: subject, lastUse: series.usage.lastUse, blocks: hot))
                    }
                }
            }
        }
        return found
    }

    /// Puts each replacement's `block` (the same rows, moved: ``SealedBlock/moved(to:at:)``) in place of its
    /// `current` block, unless a change replaced that block meanwhile; returns how many it replaced.
    public func replaceBlocks(
        _ replacements: [(type: QuantityType, subject: String, index: Int, current: SealedBlock, block: SealedBlock)]
    ) -> Int {
        var replaced = 0
        for (type, group) in Dictionary(grouping: replacements, by: { $0.type }) {
            shard(type).write { state in
                for item in group {
                    if state.series[item.subject]?.replaceBlock(at: item.index, item.current, with: item.block)
                        == true
                    {
                        replaced += 1
                    }
                }
            }
        }
        return replaced
    }
}
