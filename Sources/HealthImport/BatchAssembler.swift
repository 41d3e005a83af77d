import Foundation
import HealthModel

/// Groups accepted samples into ``SampleBatch``es by type (values are in the canonical unit), and hands out full
/// ones.
///
/// Every batch carries explicit UUIDs and a batch id hashed from them, so the same file always yields the same
/// batches. Rows waiting in unfinished batches are capped by ``ImportOptions/maxPendingRows``: past it the
/// largest group is sent early. Not thread-safe.
struct BatchAssembler {
    /// Most distinct type groups held at once; past it every group is sent and the grouping restarts.
    static let maxGroups = 256

    let subject: String
    let batchSize: Int
    let maxPendingRows: Int
    /// Finished batches, oldest first, waiting to be taken.
    private(set) var ready: [SampleBatch] = []
    private var groups: [GroupBuilder] = []
    /// The type index of each group, in the order of ``groups``.
    private var groupKeys: [Int] = []
    private var pendingRows = 0

    init(subject: String, options: ImportOptions) {
        self.subject = subject
        batchSize = options.batchSize
        maxPendingRows = options.maxPendingRows
    }

    /// Adds one sample, finishing its group's batch when it is full; `false` (and nothing added) when the
    /// group's unfinished batch holds its UUID already: an identical record, counted once.
    @discardableResult
    mutating func append(_ sample: PendingSample) -> Bool {
        let key = sample.typeIndex
        // Few groups are live at once (a handful of types per export): a linear search beats hashing.
        let position: Int
        if let known = groupKeys.firstIndex(of: key) {
            position = known
        } else {
            if groups.count >= BatchAssembler.maxGroups { flushAll() }
            position = groups.count
            groupKeys.append(key)
            groups.append(GroupBuilder(type: sample.type, unit: sample.type.batchUnit, capacity: 0))
        }
        guard groups[position].append(sample) else { return false }
        pendingRows += 1
        if groups[position].count >= batchSize {
            emit(position)
        } else if pendingRows > maxPendingRows {
            let largest = groups.indices.max { groups[$0].count < groups[$1].count }!
            emit(largest)
        }
        return true
    }

    /// Finishes every unfinished batch, in the order their groups first appeared, and forgets the groups.
    mutating func flushAll() {
        for position in groups.indices where groups[position].count > 0 { emit(position) }
        groups.removeAll()
        groupKeys.removeAll()
    }

    /// Removes and returns the oldest finished batch.
    mutating func takeReady() -> SampleBatch? {
        ready.isEmpty ? nil : ready.removeFirst()
    }

    private mutating func emit(_ position: Int) {
        pendingRows -= groups[position].count
        ready.append(groups[position].finish(subject: subject))
    }
}

/// The rows of one unfinished batch: one quantity type in one unit.
private struct GroupBuilder {
    let type: QuantityType
    let unit: String
    private var sources: [SourceInfo] = []
    private var sourcePositions: [Int: UInt32] = [:]
    /// The source of the previous row: consecutive rows mostly share it.
    private var lastSource: (id: Int, position: UInt32) = (-1, 0)
    private var starts: [Timestamp] = []
    private var ends: [Timestamp] = []
    private var values: [Double] = []
    private var sourceIndices: [UInt32] = []
    private var uuids: [UUID] = []
    /// Finds identical records without a set while rows arrive in start order (as exports list them): a UUID
    /// names the content, start included, so a row can only repeat a held row with its start.
    private var order = StartOrder()
    /// Every held UUID, built once a row starts before the latest start held (or many rows share one start).
    private var held: UUIDSet?
    private var metadata: [[String: MetadataValue]]?
    /// Rows this batch is sized for.
    private let capacity: Int

    /// A builder whose columns and UUID set are sized for `capacity` rows up front (as many as the previous batch
    /// of its group held, so a full group's next batch never regrows or rehashes).
    init(type: QuantityType, unit: String, capacity: Int) {
        self.type = type
        self.unit = unit
        self.capacity = capacity
        starts.reserveCapacity(capacity)
        ends.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
        sourceIndices.reserveCapacity(capacity)
        uuids.reserveCapacity(capacity)
    }

    var count: Int { starts.count }

    /// Adds `sample`; `false` when the batch holds its UUID (the same content) already.
    mutating func append(_ sample: PendingSample) -> Bool {
        guard isNew(sample) else { return false }
        let sourcePosition: UInt32
        if sample.source.id == lastSource.id {
            sourcePosition = lastSource.position
        } else if let known = sourcePositions[sample.source.id] {
            sourcePosition = known
        } else {
            sourcePosition = UInt32(sources.count)
            sourcePositions[sample.source.id] = sourcePosition
            sources.append(sample.source.info)
        }
        lastSource = (sample.source.id, sourcePosition)
        if !sample.metadata.isEmpty, metadata == nil { metadata = Array(repeating: [:], count: count) }
        metadata?.append(sample.metadata)
        starts.append(sample.start)
        ends.append(sample.end)
        values.append(sample.value)
        sourceIndices.append(sourcePosition)
        uuids.append(sample.uuid)
        return true
    }

    /// Whether no held row has `sample`'s UUID; if so, it counts as held from now on.
    private mutating func isNew(_ sample: PendingSample) -> Bool {
        if held == nil {
            switch order.admit(sample.uuid, start: sample.start) {
            case .new: return true
            case .repeated: return false
            case .unordered:
                var set = UUIDSet(expected: max(capacity, 2 * uuids.count))
                for uuid in uuids { _ = set.insert(uuid) }
                held = set
            }
        }
        return held!.insert(sample.uuid)
    }

    /// The batch of the rows so far, with an id hashed from its type, unit and UUIDs; the builder is emptied. Its
    /// values are marked as printed with the export's 6 digits, so a re-export printed in other display units
    /// (miles for kilometres) matches the samples already stored (``SampleBatch/valueDigits``).
    mutating func finish(subject: String) -> SampleBatch {
        var identity = ContentHash128()
        identity.add(type.identifier)
        identity.add(0x1F)
        identity.add(unit)
        identity.add(0x1F)
        for uuid in uuids {
            withUnsafeBytes(of: uuid.uuid) { identity.add($0.bindMemory(to: UInt8.self)) }
        }
        let batch = SampleBatch(
            batchID: identity.folded, subject: subject, typeIdentifier: type.identifier, unit: unit, sources: sources,
            starts: starts, ends: ends, values: values, sourceIndices: sourceIndices, uuids: uuids, metadata: metadata,
            valueDigits: SampleBatch.exportDigits)
        self = GroupBuilder(type: type, unit: unit, capacity: uuids.count)
        return batch
    }
}

/// The latest start among a batch's rows and the UUIDs of the rows starting then: enough to find a repeated
/// record while rows arrive in start order.
private struct StartOrder {
    /// Most rows sharing the latest start that are compared one by one.
    static let maxAtLatest = 16

    enum Verdict {
        /// No held row has the UUID (it is held now).
        case new
        /// A held row has it.
        case repeated
        /// The row starts before the latest start, or too many rows share it: ask a set.
        case unordered
    }

    private var latest = Int64.min
    private var atLatest: [UUID] = []

    mutating func admit(_ uuid: UUID, start: Timestamp) -> Verdict {
        if start > latest {
            latest = start
            atLatest.removeAll(keepingCapacity: true)
        } else if start < latest || atLatest.count >= StartOrder.maxAtLatest {
            return .unordered
        } else if atLatest.contains(uuid) {
            return .repeated
        }
        atLatest.append(uuid)
        return .new
    }
}
