import HealthCodec
import HealthEngine
import HealthModel

/// One store's image in the bytes of its snapshot file (Protocol/STORAGE.md): a type's shard, the workouts,
/// correlations or routes, or a profile table, with the log sequence it is complete up to (every record of that
/// store up to it is in the image, none after). A single node writes each part to a file of a snapshot
/// generation; a cluster node writes a partition's parts to JetStream. Pure, thread-safe.
public struct SnapshotPart: Hashable, Sendable {
    /// The type identifier (a quantity or category type, `workout`, or a store's own name: the manifest's).
    public var type: String
    /// The log sequence the image is complete up to.
    public var sequence: UInt64
    /// The snapshot file's bytes; empty when the store held nothing of the subjects imaged.
    public var bytes: [UInt8]

    /// A part from its parts.
    public init(type: String, sequence: UInt64, bytes: [UInt8]) {
        self.type = type
        self.sequence = sequence
        self.bytes = bytes
    }

    /// Every store's part for the subjects `subjects` accepts, each image taken with `mark()` under the store's
    /// lock (the sequence of the last record applied): every quantity and category type, then the stores kept
    /// apart (``keptApart(of:subjects:mark:)``).
    public static func capture(
        _ store: HealthStore, subjects: (String) -> Bool, mark: () -> UInt64
    ) -> [SnapshotPart] {
        var parts: [SnapshotPart] = []
        for type in QuantityType.all {
            let (image, sequence) = store.image(of: type, subjects: subjects, marking: mark)
            let bytes = image.series.isEmpty ? [] : SnapshotCodec.encode(image, sequence: sequence)
            parts.append(SnapshotPart(type: type.identifier, sequence: sequence, bytes: bytes))
        }
        return parts + keptApart(of: store, subjects: subjects, mark: mark)
    }

    /// The parts of the stores kept apart from the type shards, in this order: the workouts, correlations and
    /// routes, the characteristics and activity summaries (empty bytes for a store holding nothing of
    /// `subjects`). A single node's snapshot writes each non-empty one as a file of its own.
    public static func keptApart(
        of store: HealthStore, subjects: (String) -> Bool = { _ in true }, mark: () -> UInt64
    ) -> [SnapshotPart] {
        func objects<Object: SnapshotObject>(_ type: String, _ objects: ObjectStore<Object>) -> SnapshotPart {
            let (image, sequence) = objects.image(subjects: subjects, sequence: mark)
            let bytes = image.subjects.isEmpty ? [] : ObjectSnapshotCodec<Object>.encode(image, sequence: sequence)
            return SnapshotPart(type: type, sequence: sequence, bytes: bytes)
        }
        func table<Key, Value>(
            _ type: ProfileType, _ table: SubjectTable<Key, Value>, _ codec: SubjectTableSnapshotCodec<Key, Value>
        ) -> SnapshotPart {
            let (image, sequence) = table.image(subjects: subjects, sequence: mark)
            return SnapshotPart(
                type: type.identifier, sequence: sequence,
                bytes: image.isEmpty ? [] : codec.encode(image, sequence: sequence))
        }
        return [
            objects(WorkoutType.identifier, store.workouts), objects(Correlation.storageType, store.correlations),
            objects(WorkoutRoute.storageType, store.routes),
            table(.characteristics, store.characteristicTable, .characteristics),
            table(.activitySummary, store.activitySummaryTable, .activitySummaries),
        ]
    }

    /// Decodes the part and restores it into `store`: the whole store of its type, or with `replacing`, only the
    /// subjects it accepts (a cluster partition's; the part's own subjects replace them, none when it is empty).
    /// With `memory` (the part's bytes mapped from its file), a shard's sealed blocks are read from there: cold;
    /// with `extras` (the same mapping), its element extras.
    /// Returns the samples restored. Throws ``CodecError`` naming the offset for bytes that do not decode or do
    /// not match the part's type and sequence, ``HealthError`` for an image that breaks a store's rules.
    @discardableResult
    public func restore(
        into store: HealthStore, replacing subjects: ((String) -> Bool)? = nil,
        blocksIn memory: (any BlockMemory)? = nil, extrasIn extras: (any BlockMemory)? = nil
    ) throws -> Int {
        func objects<Object: SnapshotObject>(_ objects: ObjectStore<Object>) throws {
            guard !bytes.isEmpty else {
                return try objects.restore(ObjectImage(lastAnchor: 0, subjects: [:]), replacing: subjects)
            }
            let decoded = try ObjectSnapshotCodec<Object>.decode(bytes)
            try checkSequence(decoded.sequence)
            try objects.restore(decoded.image, replacing: subjects)
        }
        func table<Key, Value>(_ table: SubjectTable<Key, Value>, _ codec: SubjectTableSnapshotCodec<Key, Value>)
            throws
        {
            guard !bytes.isEmpty else { return table.restore([:], replacing: subjects) }
            let decoded = try codec.decode(bytes)
            try checkSequence(decoded.sequence)
            table.restore(decoded.image, replacing: subjects)
        }
        switch type {
        case WorkoutType.identifier: try objects(store.workouts)
        case Correlation.storageType: try objects(store.correlations)
        case WorkoutRoute.storageType: try objects(store.routes)
        case ProfileType.characteristics.identifier: try table(store.characteristicTable, .characteristics)
        case ProfileType.activitySummary.identifier: try table(store.activitySummaryTable, .activitySummaries)
        default:
            guard !bytes.isEmpty else {
                try store.restore(ShardImage(type: try QuantityType.named(type), series: []), replacing: subjects)
                return 0
            }
            let decoded = try SnapshotCodec.decode(bytes, blocksIn: memory, extrasIn: extras)
            guard decoded.image.type.identifier == type else {
                throw CodecError(.malformedPayload, "the file does not match its manifest entry (offset 0)")
            }
            try store.restore(decoded.image, replacing: subjects)
            return decoded.image.sampleCount
        }
        return 0
    }

    private func checkSequence(_ decoded: UInt64) throws {
        guard decoded == sequence else {
            throw CodecError(.malformedPayload, "the file does not match its manifest entry (offset 8)")
        }
    }
}
