import Foundation
import HealthModel

/// The bookkeeping that makes retries safe for one series: recent batch ids with their acknowledgements, a
/// fingerprint of every stored UUID that came with its batch, and the newest version of every sync identifier.
///
/// UUIDs derived from a batch id or from their rows' content are found through ``BatchTable`` instead, so they
/// cost no fingerprint. Memory:
/// the fingerprints (48 bits of each) take 6 bytes a slot in a hash table kept at most 75 % full, so 8 to 16 bytes
/// per such sample; batch ids are bounded by ``recentBatchLimit``; sync entries exist only for samples that carry
/// a sync identifier.
struct SeriesLedger: Sendable {
    /// Batch ids remembered per series; a batch re-sent after this many newer batches is still de-duplicated row
    /// by row through its UUIDs, only its acknowledgement is recomputed.
    static let recentBatchLimit = 64

    /// A batch id as the identity that sent it: batch ids are the client's choice, so two identities writing to
    /// one subject may both send batch 42, and neither may get the other's acknowledgement.
    struct BatchKey: Hashable, Sendable {
        var id: UInt64
        /// The writing identity; `nil` for batches remembered by a snapshot older than version 5, which did not
        /// record it (such an entry matches no later batch: a retry is then de-duplicated row by row).
        var writer: UInt32?
    }

    /// What the first application of a batch reported.
    struct BatchOutcome: Hashable, Sendable {
        var inserted: Int
        var duplicates: Int
    }

    /// A sync identifier scoped to its source (HEALTHKIT.md §3): the source's identity key and the identifier.
    struct SyncKey: Hashable, Sendable {
        var sourceKey: String
        var identifier: String
    }

    /// The stored sample that currently holds a sync identifier.
    struct SyncEntry: Hashable, Sendable {
        var version: Int64
        var uuid: UUID
        /// The sample's start, to find its row by binary search.
        var start: Timestamp
    }

    /// Recent batches in arrival order (oldest first) and their outcomes.
    private(set) var recentBatchOrder: [BatchKey] = []
    private(set) var recentBatches: [BatchKey: BatchOutcome] = [:]
    /// ``fingerprint(_:)`` of every stored UUID that came with its batch.
    private var fingerprints = FingerprintMultiset()
    /// Sync identifier → the sample holding it, and the reverse map used when samples are deleted.
    private(set) var syncEntries: [SyncKey: SyncEntry] = [:]
    private var syncKeyOfUUID: [UUID: SyncKey] = [:]

    /// 64 bits of a UUID; two UUIDs sharing one are told apart by a scan of the UUID column.
    static func fingerprint(_ uuid: UUID) -> UInt64 {
        withUnsafeBytes(of: uuid.uuid) { raw in
            let high = raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
            let low = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            return (high &* 0x9E37_79B9_7F4A_7C15) ^ low
        }
    }

    /// The outcome of batch `id` from `writer` if it was applied recently.
    func outcome(ofBatch id: UInt64, writer: UInt32) -> BatchOutcome? {
        recentBatches[BatchKey(id: id, writer: writer)]
    }

    /// Remembers a batch's outcome, forgetting the oldest beyond ``recentBatchLimit``.
    mutating func record(batch key: BatchKey, _ outcome: BatchOutcome) {
        if recentBatches.updateValue(outcome, forKey: key) == nil { recentBatchOrder.append(key) }
        if recentBatchOrder.count > SeriesLedger.recentBatchLimit {
            recentBatches[recentBatchOrder.removeFirst()] = nil
        }
    }

    /// Whether any UUID is kept explicitly (sent with its batch, or of a small batch).
    var holdsKeptUUIDs: Bool { fingerprints.count > 0 }

    /// Whether `uuid` may be stored as a UUID sent with its batch (false means certainly not).
    func mayContain(_ uuid: UUID) -> Bool { fingerprints.contains(SeriesLedger.fingerprint(uuid)) }

    /// Adds stored UUIDs.
    mutating func add(uuids: some Sequence<UUID>) {
        for uuid in uuids { fingerprints.insert(SeriesLedger.fingerprint(uuid)) }
    }

    /// Forgets a deleted UUID (its fingerprint if it came with its batch), and the sync identifier it held.
    mutating func remove(uuid: UUID, sentWithBatch: Bool) {
        if sentWithBatch { fingerprints.remove(SeriesLedger.fingerprint(uuid)) }
        if let key = syncKeyOfUUID.removeValue(forKey: uuid), syncEntries[key]?.uuid == uuid {
            syncEntries[key] = nil
        }
    }

    /// The sync identifier and version `uuid` holds, if any.
    func syncTag(of uuid: UUID) -> (identifier: String, version: Int64)? {
        guard let key = syncKeyOfUUID[uuid], let entry = syncEntries[key], entry.uuid == uuid else { return nil }
        return (key.identifier, entry.version)
    }

    /// The sample currently holding `key`.
    func syncEntry(_ key: SyncKey) -> SyncEntry? { syncEntries[key] }

    /// Makes `entry` the holder of `key`.
    mutating func setSync(_ key: SyncKey, _ entry: SyncEntry) {
        if let old = syncEntries[key] { syncKeyOfUUID[old.uuid] = nil }
        syncEntries[key] = entry
        syncKeyOfUUID[entry.uuid] = key
    }

    /// Approximate heap bytes (hash tables counted at their bucket size): ``indexBytes`` and ``retryBytes``.
    var approximateBytes: Int { indexBytes + retryBytes }

    /// Heap bytes of the UUID fingerprints.
    var indexBytes: Int { fingerprints.approximateBytes }

    /// Heap bytes of the recent batch ids and the sync identifiers' entries.
    var retryBytes: Int {
        recentBatchOrder.capacity * 16 + recentBatches.capacity * 40 + syncEntries.count * 128
            + syncKeyOfUUID.capacity * 48
    }
}
