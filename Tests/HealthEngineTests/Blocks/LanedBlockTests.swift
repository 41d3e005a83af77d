import HealthModel
import TestSupport
import Testing

@testable import HealthEngine

/// The rows of `source` among `rows`, in their order.
private func sourceRows(_ rows: SeriesRows, _ source: UInt16) -> SeriesRows {
    var lane = SeriesRows()
    for row in 0..<rows.count where rows.sourceIDs[row] == source {
        lane.starts.append(rows.starts[row])
        lane.ends.append(rows.ends[row])
        lane.values.append(rows.values[row])
        lane.sourceIDs.append(source)
        lane.arrivals.append(rows.arrivals[row])
    }
    return lane
}

/// A laned block's bytes put together by hand (Protocol/STORAGE.md, "Sealed block"): the header of `summary`,
/// the order column of the rows' sources `order` (each row's lane: the place of its source among the summary's
/// sources, one past the last for a source not among them), then `lanes` as they are.
private func lanedBytes(_ summary: BlockSummary, order: [UInt16], lanes: [[UInt8]], version: UInt8 = 2) -> [UInt8] {
    var writer = BlockWriter()
    SealedBlock.writeHeader(version, summary, into: &writer)
    var offsets: [Int32] = []
    let laneOfRow = order.map { UInt64(summary.sources.firstIndex(of: $0) ?? summary.sources.count) }
    laneOfRow.withUnsafeBufferPointer { lanes in
        SealedBlock.appendColumn(to: &writer, offsets: &offsets) { PackedIntegers.encode(lanes, into: &$0) }
    }
    for lane in lanes {
        writer.varint(UInt64(lane.count))
        writer.append(lane)
    }
    return writer.bytes
}

/// A version 1 block of `rows` whatever their sources, as hkd sealed them before laned blocks.
private func columnsBlock(_ rows: SeriesRows, summary: BlockSummary? = nil) -> SealedBlock {
    withBlockColumns(rows) { SealedBlock(columnsOf: $0, summary: summary ?? BlockSummary($0)) }
}

@Suite("Laned blocks")
struct LanedBlockTests {
    /// A watch's per-minute rows and a phone's repeating every other one at the same starts, then a third source.
    static let interleaved: SeriesRows = {
        var tuples: [(Int64, Int64, Double, UInt16, UInt64)] = []
        for minute in 0..<40 {
            let start = Int64(minute) * Micros.minute
            tuples.append((start, start + Micros.minute, Double(minute % 7), 3, UInt64(100 + minute)))
            if minute % 2 == 0 { tuples.append((start, start + Micros.minute, Double(minute % 5), 7, UInt64(minute))) }
        }
        tuples.append((40 * Micros.minute, 40 * Micros.minute, 2.5, 9, 500))
        return blockRows(tuples)
    }()

    @Test("rows of several sources seal as lanes, one version 1 block per source, and decode in their own order")
    func lanes() throws {
        let rows = Self.interleaved
        let sealed = block(rows)
        #expect(sealed.bytes.first == SealedBlock.lanedVersion)
        #expect(sealed.summary == blockSummary(of: rows))
        #expect(sealed.lanes.count == 3)
        for (lane, source) in zip(sealed.lanes, [UInt16(3), 7, 9]) {
            let own = sourceRows(rows, source)
            #expect(lane.summary == blockSummary(of: own))
            #expect(sameBits(lane.rows(), own))
        }
        #expect(sameBits(sealed.rows(), rows))
        // The layout is the specification's: header, order column, then each lane's version 1 block.
        let expected = lanedBytes(
            sealed.summary, order: Array(rows.sourceIDs),
            lanes: [3, 7, 9].map { block(sourceRows(rows, $0)).bytes })
        #expect(sealed.bytes == expected)
        let read = try SealedBlock(validating: sealed.bytes)
        #expect(sameBits(read.rows(), rows))
        #expect(read.lanes.map(\.summary) == sealed.lanes.map(\.summary))
        // Some columns only, as queries ask for them.
        let scratch = BlockScratch(capacity: rows.count)
        read.decode(into: BlockBuffers(values: scratch.values, arrivals: scratch.arrivals))
        #expect((0..<rows.count).map { scratch.values[$0] } == Array(rows.values))
        #expect((0..<rows.count).map { scratch.arrivals[$0] } == Array(rows.arrivals))
        // Cold: the lanes read the memory the block moved to.
        let memory = CopiedBlockMemory(read.bytes)
        let cold = read.moved(to: memory, at: 0)
        #expect(sameBits(cold.rows(), rows))
        #expect(sameBits(cold.lanes[1].rows(), sourceRows(rows, 7)))
    }

    @Test("a laned block's order and lanes are checked: counts, sources, lane order, lane summaries, versions")
    func damage() {
        let rows = Self.interleaved
        let summary = blockSummary(of: rows)
        let laneBytes = [UInt16(3), 7, 9].map { block(sourceRows(rows, $0)).bytes }
        let order = Array(rows.sourceIDs)
        #expect((try? SealedBlock(validating: lanedBytes(summary, order: order, lanes: laneBytes))) != nil)
        func refused(_ bytes: [UInt8], _ why: Comment) {
            #expect(throws: BlockDecodingError.self, why) { try SealedBlock(validating: bytes) }
        }
        var moreOfOne = order
        moreOfOne[1] = 3
        refused(lanedBytes(summary, order: moreOfOne, lanes: laneBytes), "a lane given more rows than it holds")
        var unknown = order
        unknown[1] = 5
        refused(lanedBytes(summary, order: unknown, lanes: laneBytes), "a row of a source without a lane")
        refused(
            lanedBytes(summary, order: order, lanes: [laneBytes[1], laneBytes[0], laneBytes[2]]),
            "lanes out of the sources' order")
        refused(lanedBytes(summary, order: order, lanes: Array(laneBytes.prefix(2))), "a lane missing")
        var forged = blockSummary(of: sourceRows(rows, 7))
        forged.sum += 1
        let forgedLane = columnsBlock(sourceRows(rows, 7), summary: forged).bytes
        refused(
            lanedBytes(summary, order: order, lanes: [laneBytes[0], forgedLane, laneBytes[2]]),
            "a lane whose summary does not match its rows")
        let nested = block(rows).bytes
        refused(
            lanedBytes(summary, order: order, lanes: [nested, laneBytes[1], laneBytes[2]]), "a laned block as a lane")
        let single = sourceRows(rows, 3)
        refused(
            lanedBytes(blockSummary(of: single), order: Array(single.sourceIDs), lanes: [laneBytes[0]]),
            "a laned block of one source")
        // The order puts the phone's first row after the watch's second: starts go back.
        var late = order
        late.swapAt(1, 2)
        refused(lanedBytes(summary, order: late, lanes: laneBytes), "an order that breaks start order")
    }

    @Test("a version 1 block of several sources (sealed before lanes) reads as before, and laning converts it")
    func olderBlocks() throws {
        let rows = Self.interleaved
        let old = try SealedBlock(validating: columnsBlock(rows).bytes)
        #expect(old.bytes.first == SealedBlock.version)
        #expect(old.lanes.isEmpty)
        #expect(sameBits(old.rows(), rows))
        let converted = try SealedBlock(validating: old.bytes, laning: true)
        #expect(converted.bytes == block(rows).bytes)
        #expect(converted.summary == old.summary)
        let single = sourceRows(rows, 3)
        #expect(try SealedBlock(validating: block(single).bytes, laning: true).bytes == block(single).bytes)
        let laned = block(rows)
        #expect(try SealedBlock(validating: laned.bytes, laning: true).bytes == laned.bytes)
    }
}
