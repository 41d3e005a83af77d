/// Approximate heap bytes the store's series hold, by structure: where a sample's bytes go.
///
/// Every figure counts capacity (what the allocator holds for it), not what is in use; none counts the
/// allocator's own slack between allocations, so the sum is below the process's resident growth.
public struct StoreMemory: Hashable, Sendable {
    /// Sealed blocks held in memory: the compressed rows, their column offsets and source lists.
    public var sealedBlocks = 0
    /// Per-block bookkeeping of each series: block descriptors, first rows and arrival spans.
    public var blockIndex = 0
    /// Rows not yet sealed, as plain columns.
    public var head = 0
    /// Batch table entries (one per applied batch, see ``BatchTable``) and their index by batch id.
    public var batchTable = 0
    /// UUIDs kept as sent (or of small batches), 16 bytes each: those that do not derive from their rows.
    public var keptUUIDs = 0
    /// The extras of rows named by their element identity (`hkq import`), 8 bytes each (``RowNaming``).
    public var elementExtras = 0
    /// The index that tells whether a kept UUID is stored (``SeriesLedger``'s fingerprints).
    public var uuidIndex = 0
    /// Recent batch ids and their outcomes, and the newest version of each sync identifier.
    public var retryLedger = 0
    /// The metadata of the rows that carry any.
    public var metadata = 0
    /// Each series' source table.
    public var sources = 0
    /// Deletion records (for changes since an anchor).
    public var changeLog = 0
    /// What a series costs whatever it holds: its subject's name and its slot in the shard's table.
    public var series = 0

    /// An empty breakdown.
    public init() {}

    /// Every part by name, in a fixed order (the names are those of server-info and the metrics).
    public var parts: [(name: String, bytes: Int)] {
        [
            ("sealedBlocks", sealedBlocks), ("blockIndex", blockIndex), ("head", head), ("batchTable", batchTable),
            ("keptUUIDs", keptUUIDs), ("elementExtras", elementExtras), ("uuidIndex", uuidIndex),
            ("retryLedger", retryLedger),
            ("metadata", metadata), ("sources", sources), ("changeLog", changeLog), ("series", series),
        ]
    }

    /// Every part together.
    public var total: Int { parts.reduce(0) { $0 + $1.bytes } }

    /// The bookkeeping that makes retries safe (``uuidIndex`` and ``retryLedger``).
    public var index: Int { uuidIndex + retryLedger }
}

extension Series {
    /// Adds this series' bytes, part by part, to `memory`.
    func addMemory(to memory: inout StoreMemory) {
        rows.addMemory(to: &memory)
        memory.batchTable += batches.tableBytes
        memory.keptUUIDs += batches.keptUUIDBytes
        memory.elementExtras += batches.elementExtrasBytes
        memory.uuidIndex += ledger.indexBytes
        memory.retryLedger += ledger.retryBytes
        memory.metadata += metadata.approximateBytes
        memory.sources += sources.approximateBytes
        memory.changeLog += changeLog.approximateBytes
    }
}
