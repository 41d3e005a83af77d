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

    /// Loads the snapshot `entry` names into `store` when it is a profile table's; returns whether it was one.
    /// Throws as ``load(_:)`` does.
    func loadProfile(_ entry: SnapshotManifest.Entry, into store: HealthStore) throws -> Bool {
        switch entry.type {
        case ProfileType.characteristics.identifier:
            store.characteristicTable.restore(try decodeTable(entry, SubjectTableSnapshotCodec.characteristics))
        case ProfileType.activitySummary.identifier:
            store.activitySummaryTable.restore(try decodeTable(entry, SubjectTableSnapshotCodec.activitySummaries))
        default:
            return false
        }
        return true
    }

    private func decodeTable<Key, Value>(
        _ entry: SnapshotManifest.Entry, _ codec: SubjectTableSnapshotCodec<Key, Value>
    ) throws -> SubjectTable<Key, Value>.Image {
        try decode(entry) { bytes in
            let decoded = try codec.decode(bytes)
            guard decoded.sequence == entry.sequence else {
                throw CodecError(.malformedPayload, "the file does not match its manifest entry (offset 8)")
            }
            return decoded.image
        }
    }
}
