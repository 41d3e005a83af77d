import Foundation
import HealthModel

/// Hands out the change anchors of one shard (one quantity type) and stamps deletions with the wall clock.
///
/// Lives in the shard and is used under its write lock only, so anchors follow the order changes are applied
/// (which is also the order the write-ahead log records them: a replay hands out the same anchors).
struct ChangeClock: Sendable {
    /// The newest anchor handed out; 0 before any change.
    var lastAnchor: UInt64 = 0

    /// The next anchor.
    mutating func next() -> UInt64 {
        lastAnchor += 1
        return lastAnchor
    }

    /// `count` consecutive anchors; returns the first.
    mutating func reserve(_ count: Int) -> UInt64 {
        let first = lastAnchor + 1
        lastAnchor += UInt64(count)
        return first
    }

    /// Microseconds since the Unix epoch, now.
    static func wallClock() -> Timestamp {
        Timestamp((Date().timeIntervalSince1970 * 1_000_000).rounded())
    }
}

extension Series {
    /// Removes rows (ascending, distinct), recording each as a deletion with its own anchor from `clock`.
    mutating func removeRows(_ rows: [Int], clock: inout ChangeClock) {
        guard !rows.isEmpty else { return }
        let now = ChangeClock.wallClock()
        var namer = namer
        let removed = decodedRows(rows)
        for row in 0..<removed.count {
            let uuid = namer.uuid(row, of: removed)
            let entry = namer.entry(ofAnchor: removed.arrivals[row])
            let sync = ledger.syncTag(of: uuid)
            changeLog.record(
                DeletionRecord(
                    anchor: clock.next(), uuid: uuid, syncIdentifier: sync?.identifier ?? "",
                    syncVersion: sync?.version ?? 0, start: removed.starts[row], end: removed.ends[row], deletedAt: now,
                    writer: entry.writer))
        }
        removeRows(rows, decoded: removed)
    }
}
