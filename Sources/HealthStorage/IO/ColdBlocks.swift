import HealthEngine
import HealthModel
import HealthPosix
import Synchronization

/// Keeps the encodings of sealed blocks in hkd's own memory within a limit (`hkd --memory-limit`): beyond it, the
/// blocks of the least recently read series are written to a segment file in `cold/` and read from there, the
/// file mapped read-only (``MappedFile``), so the kernel keeps the cold blocks that are read in its page cache
/// and drops the others first when memory runs short. Queries answer the same either way.
///
/// Segment files are a cache, not part of the data: snapshots and the log hold every block (a snapshot copies a
/// cold block's bytes from its segment), start-up removes the segments a previous run left, and a segment file is
/// removed once no block points into it (its blocks resealed by late rows or deletions, or moved again).
/// Thread-safe; ``pass()`` runs every second on its own thread after ``start()``.
public final class ColdBlocks: Sendable {
    /// The segment directory (`<data directory>/cold`).
    public let directory: String
    /// The most bytes of block encodings kept in memory.
    public let limit: Int
    private let store: HealthStore
    private let logLine: @Sendable (String) -> Void
    private let nextSegment = Atomic<UInt64>(1)
    private let passes = Mutex<PeriodicThread?>(nil)
    /// The most bytes one segment file holds.
    static let segmentBytes = 256 << 20

    /// Cold blocks for `store` in `directory` (created; segment files left there by an earlier run removed),
    /// keeping at most `limit` bytes of block encodings in memory.
    public init(directory: String, limit: Int, store: HealthStore, log logLine: @escaping @Sendable (String) -> Void)
        throws
    {
        precondition(limit >= 0, "a negative memory limit")
        try FileSystem.makeDirectories(directory, permissions: 0o700)
        for name in try FileSystem.contentsOfDirectory(directory) where name.hasSuffix(".seg") {
            try FileSystem.remove(directory + "/" + name)
        }
        self.directory = directory
        self.limit = limit
        self.store = store
        self.logLine = logLine
    }

    /// Runs ``pass()`` every `interval` until ``stop()``.
    public func start(every interval: Duration = .seconds(1)) throws {
        let thread = try PeriodicThread(name: "hkd-cold-blocks", every: interval) { [self] in
            do {
                try pass()
            } catch {
                logLine("cannot move blocks out of memory (they stay in memory): \(error)")
            }
        }
        passes.withLock { $0 = thread }
    }

    /// Stops the passes (one in progress finishes first).
    public func stop() {
        let thread = passes.withLock { passes in
            defer { passes = nil }
            return passes
        }
        thread?.stop()
    }

    /// When the encodings of hot blocks take more than ``limit`` bytes, moves blocks out until they take 90 % of
    /// it: the least recently read series first, each one's blocks in start order (the oldest rows first).
    /// Returns how many blocks it moved. Throws (moving nothing more) when a segment cannot be written or mapped.
    @discardableResult
    public func pass() throws -> Int {
        let residency = store.blockResidency()
        guard residency.hotBytes > limit else { return 0 }
        var excess = residency.hotBytes - limit / 10 * 9
        var chosen: [(type: QuantityType, subject: String, index: Int, block: SealedBlock)] = []
        choosing: for series in store.hotBlocks().sorted(by: { $0.lastUse < $1.lastUse }) {
            for (index, block) in series.blocks {
                chosen.append((series.type, series.subject, index, block))
                excess -= block.byteCount
                if excess <= 0 { break choosing }
            }
        }
        var moved = 0
        var first = 0
        while first < chosen.count {
            var last = first
            var bytes = 0
            while last < chosen.count, last == first || bytes + chosen[last].block.byteCount <= Self.segmentBytes {
                bytes += chosen[last].block.byteCount
                last += 1
            }
            moved += try moveOut(chosen[first..<last])
            first = last
        }
        return moved
    }

    /// Writes `blocks` to a new segment file, maps it, and points the blocks the series still hold into it;
    /// returns how many it moved.
    private func moveOut(_ blocks: ArraySlice<(type: QuantityType, subject: String, index: Int, block: SealedBlock)>)
        throws -> Int
    {
        let path = directory + "/\(nextSegment.wrappingAdd(1, ordering: .relaxed).oldValue).seg"
        var offsets: [Int] = []
        do {
            let file = try File(path: path, options: [.write, .create, .truncate], permissions: 0o600)
            defer { file.close() }
            var offset = 0
            for item in blocks {
                offsets.append(offset)
                try item.block.withBytes { (bytes) throws(SystemError) in try file.write(bytes) }
                offset += item.block.byteCount
            }
        } catch {
            try? FileSystem.remove(path)
            throw error
        }
        let segment = ColdSegment(try MappedFile(path: path) { path in try? FileSystem.remove(path) })
        let replacements = zip(blocks, offsets).map { item, offset in
            (item.type, item.subject, item.index, item.block, item.block.moved(to: segment, at: offset))
        }
        return store.replaceBlocks(replacements)
    }
}

/// One segment file of cold blocks, mapped: the memory cold blocks point into (``BlockMemory``).
public final class ColdSegment: BlockMemory {
    let file: MappedFile

    init(_ file: MappedFile) { self.file = file }

    public var bytes: UnsafeRawBufferPointer { file.bytes }

    /// Drops the pages read so far from the process's resident memory (``MappedFile/releaseResidentPages()``).
    func releaseResidentPages() { file.releaseResidentPages() }
}
