import HealthCodec
import HealthEngine
import HealthModel

// The snapshot files of the characteristics and activity summaries (Protocol/STORAGE.md, "Characteristics and
// activity summary snapshots"): one file per table, named in the manifest by its type, absent while it is empty.

extension SnapshotFiles {
    /// The files of `store`'s profile tables that hold anything: each table's image taken with the log's last
    /// sequence (`sequence`) under the table's read lock.
    static func profileFiles(of store: HealthStore, sequence: () -> UInt64) -> [(
        type: String, bytes: [UInt8], sequence: UInt64
    )] {
        var files: [(type: String, bytes: [UInt8], sequence: UInt64)] = []
        let (characteristics, characteristicsSequence) = store.characteristicTable.image(sequence: sequence)
        if !characteristics.isEmpty {
            let bytes = SubjectTableSnapshotCodec.characteristics.encode(
                characteristics, sequence: characteristicsSequence)
            files.append((ProfileType.characteristics.identifier, bytes, characteristicsSequence))
        }
        let (summaries, summariesSequence) = store.activitySummaryTable.image(sequence: sequence)
        if !summaries.isEmpty {
            let bytes = SubjectTableSnapshotCodec.activitySummaries.encode(summaries, sequence: summariesSequence)
            files.append((ProfileType.activitySummary.identifier, bytes, summariesSequence))
        }
        return files
    }
}
