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

/// The change log of one series besides its rows' arrival anchors: deletion records in anchor order and the
/// newest anchor pruned from them.
///
/// Why anchors on the rows instead of a list of changes: the samples are stored once (sorted by start); each row
/// carries the anchor it arrived with (a column of its sealed block), and a changes query skips every block
/// whose newest anchor is not newer than the one asked for (``BlockedRows/rowsArrived(after:)``). Live data
/// arrives roughly in start order, so new anchors sit in the head and the last blocks and an incremental query
/// reads only those.
public struct SeriesChangeLog: Hashable, Sendable {
    /// Deletions, oldest anchor first.
    public private(set) var deletions: [DeletionRecord] = []
    /// Deletion records with anchors up to this one were pruned: older anchors cannot be answered.
    public private(set) var prunedThrough: UInt64 = 0

    /// An empty log.
    public init() {}

    /// A log from snapshot parts (deletions sorted by anchor).
    public init(deletions: [DeletionRecord], prunedThrough: UInt64) {
        self.deletions = deletions
        self.prunedThrough = prunedThrough
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
        deletions.capacity * MemoryLayout<DeletionRecord>.stride
    }
}

extension SeriesChangeLog {
    /// Equal deletions and pruned anchor.
    public static func == (a: SeriesChangeLog, b: SeriesChangeLog) -> Bool {
        a.deletions == b.deletions && a.prunedThrough == b.prunedThrough
    }

    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(deletions)
        hasher.combine(prunedThrough)
    }
}
