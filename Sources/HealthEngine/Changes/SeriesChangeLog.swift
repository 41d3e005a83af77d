import Foundation
import HealthModel

/// One deleted sample as the change log keeps it: its anchor, identity and, for live collections, its time span.
///
/// Memory: about 80 bytes per record (plus the sync identifier's bytes), kept only for the deletion retention.
public struct DeletionRecord: Hashable, Sendable {
    /// The anchor the deletion was given.
    public var anchor: UInt64
    public var uuid: UUID
    /// `HKMetadataKeySyncIdentifier` of the deleted sample, empty without one.
    public var syncIdentifier: String
    public var syncVersion: Int64
    /// The deleted sample's span (so a live collection knows which buckets changed; never sent as such).
    public var start: Timestamp
    public var end: Timestamp
    /// Wall-clock time of the deletion (microseconds since the epoch), for the retention.
    public var deletedAt: Timestamp
    /// The client identity that wrote the deleted sample (0: unknown), so the read rule filters deletions too.
    public var writer: UInt32

    /// A record from its parts.
    public init(
        anchor: UInt64, uuid: UUID, syncIdentifier: String, syncVersion: Int64, start: Timestamp, end: Timestamp,
        deletedAt: Timestamp, writer: UInt32 = 0
    ) {
        self.anchor = anchor
        self.uuid = uuid
        self.syncIdentifier = syncIdentifier
        self.syncVersion = syncVersion
        self.start = start
        self.end = end
        self.deletedAt = deletedAt
        self.writer = writer
    }
}

/// The change log of one series besides its ``Series/arrivals`` column: deletion records in anchor order, the
/// newest anchor pruned from them, and the largest arrival anchor per block of rows.
///
/// Why a column and block maxima instead of a list of changes: the samples are stored once (sorted by start);
/// each row carries the anchor it arrived with (8 bytes), and a changes query skips every block of
/// ``blockSize`` rows whose largest anchor is not newer than the one asked for. Live data arrives roughly in
/// start order, so new anchors sit in the last blocks and an incremental query reads only those.
public struct SeriesChangeLog: Hashable, Sendable {
    // Equality and hashing cover the deletions and the pruned anchor; the block maxima derive from the rows.
    /// Rows per block of ``blockMaxima``.
    public static let blockSize = 512

    /// Deletions, oldest anchor first.
    public private(set) var deletions: [DeletionRecord] = []
    /// Deletion records with anchors up to this one were pruned: older anchors cannot be answered.
    public private(set) var prunedThrough: UInt64 = 0
    /// Per block of rows, the largest arrival anchor in it.
    private(set) var blockMaxima: ContiguousArray<UInt64> = []

    /// An empty log.
    public init() {}

    /// A log from snapshot parts (deletions sorted by anchor).
    public init(deletions: [DeletionRecord], prunedThrough: UInt64) {
        self.deletions = deletions
        self.prunedThrough = prunedThrough
    }

    /// Recomputes the block maxima from the block holding row `row` on (the rows before it did not move).
    mutating func rebuildBlocks(from row: Int, arrivals: ContiguousArray<UInt64>) {
        let size = SeriesChangeLog.blockSize
        let firstBlock = min(row / size, blockMaxima.count)
        let blocks = (arrivals.count + size - 1) / size
        blockMaxima.removeSubrange(min(firstBlock, blockMaxima.count)...)
        blockMaxima.reserveCapacity(blocks)
        arrivals.withUnsafeBufferPointer { a in
            var block = firstBlock
            while block < blocks {
                var largest: UInt64 = 0
                for i in (block * size)..<min(a.count, (block + 1) * size) where a[i] > largest { largest = a[i] }
                blockMaxima.append(largest)
                block += 1
            }
        }
    }

    /// Rows whose arrival anchor is greater than `anchor`, as (anchor, row) pairs in anchor order.
    func rowsArrived(after anchor: UInt64, arrivals: ContiguousArray<UInt64>) -> [(anchor: UInt64, row: Int)] {
        var found: [(anchor: UInt64, row: Int)] = []
        let size = SeriesChangeLog.blockSize
        arrivals.withUnsafeBufferPointer { a in
            for block in blockMaxima.indices where blockMaxima[block] > anchor {
                for row in (block * size)..<min(a.count, (block + 1) * size) where a[row] > anchor {
                    found.append((a[row], row))
                }
            }
        }
        found.sort { $0.anchor < $1.anchor }
        return found
    }

    /// Index of the first deletion record with an anchor greater than `anchor`.
    func firstDeletion(after anchor: UInt64) -> Int {
        var low = 0
        var high = deletions.count
        while low < high {
            let middle = (low + high) / 2
            if deletions[middle].anchor <= anchor { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Adds a deletion (its anchor is newer than every record's).
    mutating func record(_ deletion: DeletionRecord) { deletions.append(deletion) }

    /// Drops the records deleted before `cutoff`; returns how many.
    @discardableResult
    mutating func prune(deletedBefore cutoff: Timestamp) -> Int {
        let expired = deletions.prefix { $0.deletedAt < cutoff }.count
        guard expired > 0 else { return 0 }
        prunedThrough = max(prunedThrough, deletions[expired - 1].anchor)
        deletions.removeFirst(expired)
        return expired
    }

    /// The newest anchor a query can no longer be answered from, counting records older than `cutoff` as pruned.
    func expiredThrough(cutoff: Timestamp) -> UInt64 {
        var through = prunedThrough
        for record in deletions {
            guard record.deletedAt < cutoff else { break }
            through = record.anchor
        }
        return through
    }

    /// Approximate heap bytes.
    var approximateBytes: Int {
        blockMaxima.capacity * 8 + deletions.capacity * MemoryLayout<DeletionRecord>.stride
    }
}

extension SeriesChangeLog {
    /// Takes the block maxima computed by another log for the same rows (snapshot restore).
    mutating func adoptBlocks(of other: SeriesChangeLog) { blockMaxima = other.blockMaxima }
}

extension SeriesChangeLog {
    /// Equal deletions and pruned anchor (block maxima are derived data).
    public static func == (a: SeriesChangeLog, b: SeriesChangeLog) -> Bool {
        a.deletions == b.deletions && a.prunedThrough == b.prunedThrough
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(deletions)
        hasher.combine(prunedThrough)
    }
}
