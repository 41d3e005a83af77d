import HealthModel

/// Read-only pointers to consecutive rows of a series, the input of ``SealedBlock/init(encoding:)``.
public struct BlockColumns {
    public let starts: UnsafeBufferPointer<Timestamp>
    public let ends: UnsafeBufferPointer<Timestamp>
    public let values: UnsafeBufferPointer<Double>
    public let sourceIDs: UnsafeBufferPointer<UInt16>
    public let arrivals: UnsafeBufferPointer<UInt64>

    /// The rows; every column must hold the same number of them.
    public init(
        starts: UnsafeBufferPointer<Timestamp>, ends: UnsafeBufferPointer<Timestamp>,
        values: UnsafeBufferPointer<Double>, sourceIDs: UnsafeBufferPointer<UInt16>,
        arrivals: UnsafeBufferPointer<UInt64>
    ) {
        precondition(
            ends.count == starts.count && values.count == starts.count && sourceIDs.count == starts.count
                && arrivals.count == starts.count, "block columns of different lengths")
        self.starts = starts
        self.ends = ends
        self.values = values
        self.sourceIDs = sourceIDs
        self.arrivals = arrivals
    }

    public var count: Int { starts.count }
}

/// Where ``SealedBlock/decode(into:)`` writes: a pointer per column wanted, each with room for the block's
/// ``BlockSummary/count`` rows; nil columns are skipped (ends need starts).
public struct BlockBuffers {
    public var starts: UnsafeMutablePointer<Timestamp>?
    public var ends: UnsafeMutablePointer<Timestamp>?
    public var values: UnsafeMutablePointer<Double>?
    public var sourceIDs: UnsafeMutablePointer<UInt16>?
    public var arrivals: UnsafeMutablePointer<UInt64>?

    public init(
        starts: UnsafeMutablePointer<Timestamp>? = nil, ends: UnsafeMutablePointer<Timestamp>? = nil,
        values: UnsafeMutablePointer<Double>? = nil, sourceIDs: UnsafeMutablePointer<UInt16>? = nil,
        arrivals: UnsafeMutablePointer<UInt64>? = nil
    ) {
        self.starts = starts
        self.ends = ends
        self.values = values
        self.sourceIDs = sourceIDs
        self.arrivals = arrivals
    }
}

/// An immutable, compressed run of consecutive rows of a series (start order), column by column, with the
/// summary that lets queries skip decoding it. Byte layout: Protocol/STORAGE.md, "Sealed blocks".
///
/// Rows of one source make a version 1 block. Rows of several sources make a *laned* block (version 2): each
/// source's rows are a version 1 block of their own (a ``lanes`` entry), and an order column says which lane
/// each row of the block comes from, so the rows decode in start order as from a version 1 block, while a merge of
/// sources reads the lanes apart (``Series/chunkedMergedSums(_:into:bySource:)``).
///
/// Blocks made here (``init(encoding:)``) and blocks read back (``init(validating:)``) hold rows that keep the
/// engine's invariants: starts ascending, every end at or after its start, instants in ``SupportedInstants``,
/// finite values, and a summary that matches the rows.
public struct SealedBlock: Sendable {
    /// The format version of a block of columns, the first byte of every block.
    public static let version: UInt8 = 1
    /// The version of a laned block (rows of several sources, each source's a version 1 block inside it).
    public static let lanedVersion: UInt8 = 2
    /// Most rows a block may hold (a decoder's cap before it sizes anything).
    public static let maxRows = 65536

    /// The encoded block, header and columns: in the block's own memory (hot), or in read-only memory it shares
    /// with other blocks (cold: a mapped file, see ``BlockMemory``).
    let storage: Storage

    enum Storage: Sendable {
        case owned([UInt8])
        case borrowed(any BlockMemory, offset: Int, count: Int)
    }
    /// The rows' summary, as the header holds it (with ``BlockSummary/timeWeighted`` worked out from the rows).
    public private(set) var summary: BlockSummary
    /// Where each of the five columns (starts, durations, values, sources, arrivals) begins and ends: ten
    /// byte offsets into ``storage``; for a laned block, two: where its order column begins and ends.
    let columnOffsets: [Int32]
    /// A laned block's lanes: each source's rows, in the order of ``BlockSummary/sources``, as a version 1 block
    /// reading this block's bytes (its offsets lie inside them); empty for a version 1 block. Views to read
    /// through, not blocks to store: their ``bytes`` are this block's.
    let lanes: [SealedBlock]

    /// Rows in the block.
    public var count: Int { summary.count }

    /// Encodes `rows`: 1 to ``maxRows`` rows in start order that keep the engine's invariants (any bits
    /// round-trip, but only such rows pass ``init(validating:)``). Rows of several sources make a laned block.
    public init(encoding rows: BlockColumns) {
        precondition(rows.count >= 1 && rows.count <= Self.maxRows, "a block holds 1 to \(Self.maxRows) rows")
        let summary = BlockSummary(rows)
        self =
            summary.sources.count > 1
            ? Self(laning: rows, summary: summary) : Self(columnsOf: rows, summary: summary)
    }

    /// A version 1 block of `rows` (`summary` is theirs), one column each, whatever their sources (hkd sealed
    /// rows of several sources so before laned blocks; see ``init(validating:checkingInvariants:laning:decoded:)``).
    init(columnsOf rows: BlockColumns, summary: BlockSummary) {
        var writer = BlockWriter(capacity: 96 + rows.count * 2)
        Self.writeHeader(Self.version, summary, into: &writer)
        var offsets: [Int32] = []
        Self.appendColumn(to: &writer, offsets: &offsets) { StartColumn.encode(rows.starts, into: &$0) }
        Self.appendColumn(to: &writer, offsets: &offsets) { DurationColumn.encode(rows, into: &$0) }
        Self.appendColumn(to: &writer, offsets: &offsets) { ValueColumn.encode(rows.values, into: &$0) }
        Self.appendColumn(to: &writer, offsets: &offsets) { SourceColumn.encode(rows.sourceIDs, into: &$0) }
        Self.appendColumn(to: &writer, offsets: &offsets) { ArrivalColumn.encode(rows.arrivals, into: &$0) }
        self.init(owning: writer.bytes, summary: summary, columnOffsets: offsets, lanes: [])
    }

    /// A block owning an exact copy of `written` (a writer's buffer has grown with slack that would stay resident
    /// for the block's life), with lanes (summary and offsets) reading the same bytes.
    init(owning written: [UInt8], summary: BlockSummary, columnOffsets: [Int32], lanes: [(BlockSummary, [Int32])]) {
        let storage = Storage.owned(
            [UInt8](unsafeUninitializedCapacity: written.count) { buffer, count in
                count = buffer.initialize(fromContentsOf: written)
            })
        self.init(storage: storage, summary: summary, columnOffsets: columnOffsets, lanes: lanes)
    }

    /// The header every version shares: version, row count, the summary's seven words and its sources.
    static func writeHeader(_ version: UInt8, _ summary: BlockSummary, into writer: inout BlockWriter) {
        writer.byte(version)
        writer.varint(UInt64(summary.count))
        for word in [
            UInt64(bitPattern: summary.firstStart), UInt64(bitPattern: summary.lastStart),
            UInt64(bitPattern: summary.latestEnd), UInt64(bitPattern: summary.longestDuration),
            summary.sum.bitPattern, summary.minimum.bitPattern, summary.maximum.bitPattern,
        ] {
            writer.fixed64(word)
        }
        writer.varint(UInt64(summary.sources.count))
        var previous = -1
        for source in summary.sources {
            writer.varint(UInt64(Int(source) - previous - 1))
            previous = Int(source)
        }
    }

    /// Appends a column (its length, then its bytes) and where its bytes begin and end to `offsets`.
    static func appendColumn(
        to writer: inout BlockWriter, offsets: inout [Int32], _ encode: (inout BlockWriter) -> Void
    ) {
        var body = BlockWriter()
        encode(&body)
        writer.varint(UInt64(body.bytes.count))
        offsets.append(Int32(writer.bytes.count))
        writer.append(body.bytes)
        offsets.append(Int32(writer.bytes.count))
    }

    /// Reads a block from bytes that may be damaged: the header and every column are decoded and checked (the
    /// summary recomputed, no byte left over, and unless `checkingInvariants` is false the engine's invariants).
    /// Never traps; counts are capped before anything is allocated. Snapshots read with `checkingInvariants:
    /// false`, so a block holds whatever rows an image may hold, and restoring the image checks the rows.
    /// `decoded` is handed the rows the check decoded (valid only during the call), so a reader that wants them
    /// does not decode the block a second time. With `laning`, a version 1 block of several sources (sealed before
    /// laned blocks existed) comes back laned, encoded from those rows: how a snapshot read into memory converts.
    public init(
        validating bytes: [UInt8], checkingInvariants: Bool = true, laning: Bool = false,
        decoded: (BlockColumns) -> Void = { _ in }
    ) throws(BlockDecodingError) {
        let header = try withBlockBytes(bytes) { (raw) throws(BlockDecodingError) in
            try Self.parseHeader(raw)
        }
        self.init(storage: .owned(bytes), summary: header.summary, columnOffsets: header.offsets, lanes: header.lanes)
        let n = summary.count
        let scratch = BlockScratch(capacity: n)
        try decodeChecked(into: scratch.all, checkingLanes: true)
        let rows = scratch.rows(n)
        if checkingInvariants { try Self.checkInvariants(rows) }
        let computed = BlockSummary(rows)
        guard computed == summary else { throw BlockDecodingError("summary does not match the rows") }
        self.summary = computed
        if laning, lanes.isEmpty, computed.sources.count > 1 { self = SealedBlock(laning: rows, summary: computed) }
        decoded(rows)
    }

    /// What a block's header gives: its summary, its column offsets, and a laned block's lanes' summaries and
    /// column offsets (all offsets from the start of the block).
    struct Header {
        var summary: BlockSummary
        var offsets: [Int32]
        var lanes: [(BlockSummary, [Int32])] = []
    }

    /// The header of the block in `raw` (which begins `base` bytes into the block), checking that its columns,
    /// or its order column and lanes, fill the rest; lanes are version 1 blocks of one source each, in the
    /// order of the summary's sources.
    static func parseHeader(
        _ raw: UnsafeRawBufferPointer, base: Int = 0, isLane: Bool = false
    ) throws(BlockDecodingError) -> Header {
        var reader = BlockReader(raw)
        let version = try reader.byte()
        guard version == Self.version || (version == Self.lanedVersion && !isLane) else {
            throw BlockDecodingError(isLane ? "lane version \(version)" : "version \(version)")
        }
        let count = try reader.count(atMost: maxRows, "row count")
        guard count >= 1 else { throw BlockDecodingError("no rows") }
        var words: [UInt64] = []
        for _ in 0..<7 { words.append(try reader.fixed64()) }
        let sourceCount = try reader.count(atMost: count, "source count")
        guard sourceCount >= 1 else { throw BlockDecodingError("no sources") }
        var sources: [UInt16] = []
        sources.reserveCapacity(sourceCount)
        var previous = -1
        for _ in 0..<sourceCount {
            let gap = try reader.count(atMost: Int(UInt16.max) - previous - 1, "source id gap")
            previous += gap + 1
            sources.append(UInt16(previous))
        }
        let summary = BlockSummary(
            count: count, sum: Double(bitPattern: words[4]), minimum: Double(bitPattern: words[5]),
            maximum: Double(bitPattern: words[6]), firstStart: Int64(bitPattern: words[0]),
            lastStart: Int64(bitPattern: words[1]), latestEnd: Int64(bitPattern: words[2]),
            longestDuration: Int64(bitPattern: words[3]), sources: sources)
        var header = Header(summary: summary, offsets: [])
        for _ in 0..<(version == Self.version ? 5 : 1) {
            let length = try reader.count(atMost: reader.remaining, "column length")
            header.offsets.append(Int32(base + reader.offset))
            try reader.skip(length)
            header.offsets.append(Int32(base + reader.offset))
        }
        if version == Self.lanedVersion {
            guard sourceCount >= 2 else { throw BlockDecodingError("a laned block of one source") }
            var laneRows = 0
            for source in sources {
                let length = try reader.count(atMost: reader.remaining, "lane length")
                let start = reader.offset
                try reader.skip(length)
                let lane = try parseHeader(
                    UnsafeRawBufferPointer(rebasing: raw[start..<(start + length)]), base: base + start, isLane: true)
                guard lane.summary.sources == [source] else {
                    throw BlockDecodingError("the lane of source \(source) holds sources \(lane.summary.sources)")
                }
                laneRows += lane.summary.count
                header.lanes.append((lane.summary, lane.offsets))
            }
            guard laneRows == count else { throw BlockDecodingError("lanes hold \(laneRows) rows of \(count)") }
        }
        guard reader.remaining == 0 else { throw BlockDecodingError("\(reader.remaining) bytes after the columns") }
        return header
    }

    /// Throws unless the block's rows keep the engine's invariants, the ones
    /// ``init(validating:checkingInvariants:decoded:)`` checks: a block sealed from rows that break them would be
    /// refused when read back.
    public func checkInvariants() throws(BlockDecodingError) {
        let scratch = BlockScratch(capacity: count)
        decode(into: scratch.all)
        try Self.checkInvariants(scratch.rows(count))
    }

    /// Throws unless the decoded rows keep the engine's invariants.
    private static func checkInvariants(_ rows: BlockColumns) throws(BlockDecodingError) {
        for i in 0..<rows.count {
            guard SupportedInstants.contains(rows.starts[i]), SupportedInstants.contains(rows.ends[i]) else {
                throw BlockDecodingError("row \(i) lies outside \(SupportedInstants.description)")
            }
            guard rows.ends[i] >= rows.starts[i] else { throw BlockDecodingError("row \(i) ends before it starts") }
            guard i == 0 || rows.starts[i] >= rows.starts[i - 1] else {
                throw BlockDecodingError("row \(i) starts before the row above")
            }
            guard rows.values[i].isFinite else { throw BlockDecodingError("row \(i) has a value that is not finite") }
        }
    }

    /// The reader of column `index` (0 starts … 4 arrivals; a laned block's order column is its column 0).
    func column(_ index: Int, _ raw: UnsafeRawBufferPointer) -> BlockReader {
        let range = Int(columnOffsets[2 * index])..<Int(columnOffsets[2 * index + 1])
        return BlockReader(UnsafeRawBufferPointer(rebasing: raw[range]))
    }

    /// Decodes the columns `buffers` asks for (each pointer must have room for ``count`` rows).
    public func decode(into buffers: BlockBuffers) {
        do {
            try decodeChecked(into: buffers)
        } catch {
            preconditionFailure("a validated block failed to decode: \(error)")
        }
    }

    /// ``decode(into:)``, throwing on damaged bytes; `checkingLanes` also checks each lane's summary against its
    /// rows (a reader of untrusted bytes), and needs every column.
    func decodeChecked(into buffers: BlockBuffers, checkingLanes: Bool = false) throws(BlockDecodingError) {
        guard lanes.isEmpty else { return try decodeLanes(into: buffers, checkingLanes: checkingLanes) }
        let n = count
        try withBytes { (raw) throws(BlockDecodingError) in
            func finish(_ reader: BlockReader) throws(BlockDecodingError) {
                guard reader.remaining == 0 else { throw BlockDecodingError("bytes left in a column") }
            }
            if let starts = buffers.starts {
                var reader = column(0, raw)
                try StartColumn.decode(&reader, first: summary.firstStart, count: n, into: starts)
                try finish(reader)
                if let ends = buffers.ends {
                    var reader = column(1, raw)
                    try DurationColumn.decode(&reader, starts: starts, count: n, into: ends)
                    try finish(reader)
                }
            } else {
                precondition(buffers.ends == nil, "decoding ends needs the starts")
            }
            if let values = buffers.values {
                var reader = column(2, raw)
                try ValueColumn.decode(&reader, count: n, into: values)
                try finish(reader)
            }
            if let ids = buffers.sourceIDs {
                var reader = column(3, raw)
                try SourceColumn.decode(&reader, count: n, into: ids)
                try finish(reader)
            }
            if let arrivals = buffers.arrivals {
                var reader = column(4, raw)
                try ArrivalColumn.decode(&reader, count: n, into: arrivals)
                try finish(reader)
            }
        }
    }

    /// Heap bytes the block holds (its encoding when it is hot, offsets and source list).
    public var approximateBytes: Int {
        let own: Int
        switch storage {
        case .owned(let bytes): own = bytes.capacity
        case .borrowed: own = 0
        }
        let views = lanes.reduce(0) { $0 + $1.columnOffsets.capacity * 4 + $1.summary.sources.capacity * 2 + 64 }
        return own + columnOffsets.capacity * 4 + summary.sources.capacity * 2 + 64 + views
    }

    // MARK: Hot and cold

    /// Runs `body` with the block's encoded bytes (valid only during the call).
    public func withBytes<R, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> R) throws(Failure)
        -> R
    {
        switch storage {
        case .owned(let bytes):
            return try withBlockBytes(bytes, body)
        case .borrowed(let memory, let offset, let count):
            return try body(UnsafeRawBufferPointer(rebasing: memory.bytes[offset..<offset + count]))
        }
    }

    /// The encoding (the block's own array when it is hot, a copy when it is cold).
    public var bytes: [UInt8] {
        switch storage {
        case .owned(let bytes): bytes
        case .borrowed: withBytes { Array($0) }
        }
    }

    /// Bytes of the encoding.
    public var byteCount: Int {
        switch storage {
        case .owned(let bytes): bytes.count
        case .borrowed(_, _, let count): count
        }
    }

    /// Whether the encoding lies in shared read-only memory (``moved(to:at:)``) rather than the block's own.
    public var isCold: Bool {
        if case .borrowed = storage { return true }
        return false
    }

    /// The same block with its encoding read from `memory` at `offset`, where the caller copied ``withBytes(_:)``'s
    /// bytes: the block's own copy is released once no other value of this block holds it.
    public func moved(to memory: any BlockMemory, at offset: Int) -> SealedBlock {
        precondition(offset >= 0 && offset + byteCount <= memory.bytes.count, "a block moved past its memory's end")
        return SealedBlock(
            storage: .borrowed(memory, offset: offset, count: byteCount), summary: summary,
            columnOffsets: columnOffsets, lanes: lanes.map { ($0.summary, $0.columnOffsets) })
    }

    /// Whether `other` is this very block (the same encoding in the same memory), not merely equal rows: a mover
    /// replacing a block checks the series still holds it.
    public func isSameBlock(as other: SealedBlock) -> Bool {
        switch (storage, other.storage) {
        case (.owned(let a), .owned(let b)):
            return a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
        case (.borrowed(let a, let x, _), .borrowed(let b, let y, _)):
            return a === b && x == y
        default:
            return false
        }
    }

    private init(storage: Storage, summary: BlockSummary, columnOffsets: [Int32], lanes: [(BlockSummary, [Int32])]) {
        self.storage = storage
        self.summary = summary
        self.columnOffsets = columnOffsets
        self.lanes = lanes.map { SealedBlock(storage: storage, summary: $0.0, columnOffsets: $0.1, lanes: []) }
    }
}

extension SealedBlock {
    /// Reads the block into `rows` without decoding a row when its starts are regular (the first delta repeated),
    /// its durations equal and its values whole or decimal numbers that are zero but for exceptions; returns
    /// false, `rows` unspecified, for any other block.
    func sparseRegularRows(into rows: inout SparseRegularRows) -> Bool {
        guard count >= 2, lanes.isEmpty else { return false }
        let parsed: Bool? = try? withBytes { (raw) throws(BlockDecodingError) -> Bool in
            guard let (step, duration) = try regularShape(raw) else { return false }
            var values = column(2, raw)
            guard try values.byte() == ValueColumn.decimalMode else { return false }
            let exponent = Int(try values.byte())
            guard exponent < ValueColumn.powers.count,
                let (base, exceptions) = try PackedIntegers.sparseHeader(&values, count: count), base == 0
            else { return false }
            rows.first = summary.firstStart
            rows.step = step
            rows.duration = duration
            rows.count = count
            // Sized once, then filled through pointers: no per-row append.
            rows.rows.removeAll(keepingCapacity: true)
            rows.values.removeAll(keepingCapacity: true)
            rows.rows.append(contentsOf: repeatElement(0, count: exceptions))
            rows.values.append(contentsOf: repeatElement(0, count: exceptions))
            let power = ValueColumn.powers[exponent]
            try rows.rows.withUnsafeMutableBufferPointer { (found) throws(BlockDecodingError) in
                try rows.values.withUnsafeMutableBufferPointer { (amounts) throws(BlockDecodingError) in
                    var row = -1
                    for index in 0..<exceptions {
                        let (next, high) = try PackedIntegers.nextException(&values, count: count, after: row)
                        row = next
                        found[index] = row
                        amounts[index] = Double(unZigZag(high))
                    }
                    // Whole numbers (exponent 0) need no division; kept out of the loop above, where the compiler
                    // computes both sides of a select and the division's latency dominates.
                    if exponent != 0 {
                        for index in 0..<exceptions { amounts[index] /= power }
                    }
                }
            }
            return values.remaining == 0
        }
        return parsed ?? false
    }

    /// The step and duration of a version 1 block of two or more rows whose starts are regular (the first delta
    /// repeated) and whose durations are equal, read from the two columns' headers; nil for any other block.
    func regularShape() -> (step: Int64, duration: Int64)? {
        guard count >= 2, lanes.isEmpty else { return nil }
        return (try? withBytes { (raw) throws(BlockDecodingError) in try regularShape(raw) }) ?? nil
    }

    /// ``regularShape()`` of the block's bytes.
    private func regularShape(_ raw: UnsafeRawBufferPointer) throws(BlockDecodingError) -> (Int64, Int64)? {
        // Regular starts: deltas all equal (zero bits), or deltas of deltas zero but the first (the encoder scales
        // only columns that take bits, so a regular column is never in a scaled mode).
        var starts = column(0, raw)
        let mode = try starts.byte()
        guard let (base, changes) = try PackedIntegers.sparseHeader(&starts, count: count - 1) else { return nil }
        var step: Int64
        if mode == StartColumn.deltaMode, changes == 0 {
            step = Int64(bitPattern: base)
        } else if mode == StartColumn.deltaOfDeltaMode, base == 0, changes <= 1 {
            step = 0
            if changes == 1 {
                let (row, high) = try PackedIntegers.nextException(&starts, count: count - 1, after: -1)
                guard row == 0 else { return nil }
                step = unZigZag(high)
            }
        } else {
            return nil
        }
        var durations = column(1, raw)
        guard let (duration, odd) = try PackedIntegers.sparseHeader(&durations, count: count), odd == 0,
            starts.remaining == 0, durations.remaining == 0
        else { return nil }
        return (step, Int64(bitPattern: duration))
    }
}

/// Read-only memory holding the encodings of cold sealed blocks (``SealedBlock/moved(to:at:)``), such as a file
/// mapped into memory: it must stay valid and unchanged for as long as the object lives, which is as long as a
/// block points into it.
public protocol BlockMemory: AnyObject, Sendable {
    /// The memory.
    var bytes: UnsafeRawBufferPointer { get }
}
