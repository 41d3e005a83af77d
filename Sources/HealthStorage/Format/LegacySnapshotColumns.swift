import Foundation
import HealthEngine
import HealthModel

// Reading snapshots older than version 4 (HKSNAP01–03), which kept a UUID and a writer per row instead of the
// batch table: the table is rebuilt from those columns (Protocol/STORAGE.md, "Older versions").

extension SeriesImage {
    /// An image from per-row UUID and writer columns, as snapshots before version 4 stored them: the batch table
    /// is rebuilt from them. Without `writers` every row has writer 0; without `arrivals` (version 1) rows are
    /// numbered in start order. Throws ``ErrorCode/internalError`` when the columns differ in length.
    init(
        subject: String, starts: ContiguousArray<Timestamp>, ends: ContiguousArray<Timestamp>,
        values: ContiguousArray<Double>, sourceIDs: ContiguousArray<UInt16>, uuids: ContiguousArray<UUID>,
        writers: ContiguousArray<UInt32>?, arrivals: ContiguousArray<UInt64>?, maxDuration: Int64,
        sources: [SourceInfo], userEnteredSources: [Bool], priorityOrder: [SourceInfo]?, recentBatches: [RecentBatch],
        syncHolders: [SyncHolder], changeLog: SeriesChangeLog = SeriesChangeLog()
    ) throws {
        let writers = writers ?? ContiguousArray(repeating: 0, count: starts.count)
        let arrivals = arrivals ?? ContiguousArray((0..<UInt64(starts.count)).map { $0 + 1 })
        guard uuids.count == starts.count, writers.count == starts.count, arrivals.count == starts.count,
            Set(arrivals).count == arrivals.count
        else {
            throw HealthError(
                .internalError, "series of subject \"\(subject)\" in the snapshot: bad UUID, writer or anchor columns")
        }
        self.init(
            subject: subject, starts: starts, ends: ends, values: values, sourceIDs: sourceIDs, arrivals: arrivals,
            batches: LegacyBatchTable.entries(uuids: uuids, writers: writers, arrivals: arrivals),
            maxDuration: maxDuration, sources: sources, userEnteredSources: userEnteredSources,
            priorityOrder: priorityOrder, recentBatches: recentBatches, syncHolders: syncHolders, changeLog: changeLog)
    }
}

/// The batch table of a pre-version-4 series, rebuilt from its per-row columns.
enum LegacyBatchTable {
    /// A table rebuilt from per-row UUIDs, writers and anchors (snapshots older than version 4): consecutive
    /// anchors with consecutive derived UUIDs of one batch and one writer share an entry; consecutive other UUIDs
    /// of one writer share an entry that keeps them explicitly.
    static func entries(
        uuids: ContiguousArray<UUID>, writers: ContiguousArray<UInt32>, arrivals: ContiguousArray<UInt64>
    ) -> [AppliedBatch] {
        var entries: [AppliedBatch] = []
        // The entry being built; its explicit UUIDs grow in `kept` (outside the entry, so appends stay in place).
        var current: AppliedBatch?
        var kept: ContiguousArray<UUID>?
        func flush() {
            guard var entry = current else { return }
            entry.naming = kept.map { .kept(KeptUUIDs($0)) } ?? .batch
            entries.append(entry)
        }
        for row in arrivals.indices.sorted(by: { arrivals[$0] < arrivals[$1] }) {
            let anchor = arrivals[row]
            let uuid = uuids[row]
            let writer = writers[row]
            let derived = SampleBatch.batchAndRow(ofDerived: uuid)
            if let entry = current, entry.anchors.upperBound == anchor, entry.writer == writer {
                if kept == nil, let derived, derived.batchID == entry.batchID,
                    derived.row == entry.firstRow + entry.count
                {
                    current!.count += 1
                    continue
                }
                if kept != nil, derived == nil {
                    kept!.append(uuid)
                    current!.count += 1
                    continue
                }
            }
            flush()
            if let derived {
                current = AppliedBatch(
                    batchID: derived.batchID, firstAnchor: anchor, firstRow: derived.row, count: 1, writer: writer,
                    naming: .batch)
                kept = nil
            } else {
                current = AppliedBatch(
                    batchID: 0, firstAnchor: anchor, firstRow: 0, count: 1, writer: writer, naming: .batch)
                kept = [uuid]
            }
        }
        flush()
        return entries
    }
}
