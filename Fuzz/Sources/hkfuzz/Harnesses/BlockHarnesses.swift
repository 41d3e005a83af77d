import HealthEngine
import HealthModel

/// Sealed blocks of the engine (HealthEngine/Blocks), as snapshots will hold them.
enum BlockHarnesses {
    /// The five columns of a block's rows, decoded.
    struct Rows: Equatable {
        var starts: [Timestamp]
        var ends: [Timestamp]
        var valueBits: [UInt64]
        var sourceIDs: [UInt16]
        var arrivals: [UInt64]
    }

    /// Every row of `block`.
    static func rows(_ block: SealedBlock) -> Rows {
        let scratch = BlockScratch(capacity: block.count)
        block.decode(into: scratch.all)
        let rows = scratch.rows(block.count)
        return Rows(
            starts: Array(rows.starts), ends: Array(rows.ends), valueBits: rows.values.map(\.bitPattern),
            sourceIDs: Array(rows.sourceIDs), arrivals: Array(rows.arrivals))
    }

    /// A block sealed from `rows`.
    static func seal(_ rows: Rows) -> SealedBlock {
        let values = rows.valueBits.map(Double.init(bitPattern:))
        return rows.starts.withUnsafeBufferPointer { s in
            rows.ends.withUnsafeBufferPointer { e in
                values.withUnsafeBufferPointer { v in
                    rows.sourceIDs.withUnsafeBufferPointer { i in
                        rows.arrivals.withUnsafeBufferPointer { a in
                            SealedBlock(
                                encoding: BlockColumns(starts: s, ends: e, values: v, sourceIDs: i, arrivals: a))
                        }
                    }
                }
            }
        }
    }

    /// Seed rows: a regular minute series, decimals with a late gap, arbitrary doubles from several sources.
    static func seedRows() -> [Rows] {
        let minute: [Timestamp] = (0..<300).map { Int64($0) * Micros.minute }
        var random = SeededRandom(seed: 20)
        return [
            Rows(
                starts: minute, ends: minute.map { $0 + Micros.minute },
                valueBits: minute.map { Double(60 + $0 % 7).bitPattern },
                sourceIDs: Array(repeating: 0, count: 300), arrivals: (0..<300).map { UInt64($0) + 1 }),
            Rows(
                starts: [0, 10, 10, 5_000_000], ends: [0, 20, 90, 5_000_001],
                valueBits: [1.25, -0.5, 0, 3.75].map(\.bitPattern), sourceIDs: [1, 1, 2, 1], arrivals: [9, 3, 4, 5]),
            Rows(
                starts: [-5, 7, 8], ends: [9, 7, 100],
                valueBits: (0..<3).map { _ in Double(random.next() % 1_000_000) / 7 }.map(\.bitPattern),
                sourceIDs: [3, 9, 3], arrivals: [1, 2, 3]),
        ]
    }

    /// A block's bytes: if they validate, the rows re-seal into a block that validates to the same rows.
    static let block = Harness(
        "block", "SealedBlock(validating:) of a sealed block's bytes; round trip of its rows",
        seeds: { seedRows().map { seal($0).bytes } }
    ) { input in
        guard let block = attempt({ try SealedBlock(validating: input.rest()) }) else { return }
        let decoded = rows(block)
        let again = seal(decoded)
        require(again.summary == block.summary, "re-sealed rows have another summary")
        guard let read = attempt({ try SealedBlock(validating: again.bytes) }) else {
            require(false, "re-sealed rows do not validate")
            return
        }
        require(rows(read) == decoded, "decode(seal(rows)) differs from rows")
    }
}
