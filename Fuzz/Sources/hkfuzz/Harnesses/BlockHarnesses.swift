import HealthCodec
import HealthEngine
import HealthModel
import HealthStorage

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

    /// The rows of the first series of `image`.
    static func rows(_ image: ShardImage) -> Rows {
        let s = image.series[0]
        return Rows(
            starts: Array(s.starts), ends: Array(s.ends), valueBits: s.values.map(\.bitPattern),
            sourceIDs: Array(s.sourceIDs), arrivals: Array(s.arrivals))
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
        var random = SplitMix64(seed: 20)
        return [
            Rows(
                starts: minute, ends: minute.map { $0 + Micros.minute },
                valueBits: minute.map { Double(60 + $0 % 7).bitPattern },
                sourceIDs: Array(repeating: 0, count: 300), arrivals: (0..<300).map { UInt64($0) + 1 }),
            Rows(
                starts: [0, 10, 10, 5_000_000], ends: [0, 20, 90, 5_000_001],
                valueBits: [1.25, -0.5, 0, 3.75].map(\.bitPattern), sourceIDs: [1, 1, 2, 1], arrivals: [9, 3, 4, 5]),
            // An export's irregular whole seconds: durations packed scaled, in seconds.
            Rows(
                starts: (0..<40).map { Int64($0) * 617 * 1_000_000 },
                ends: (0..<40).map { Int64($0) * 617 * 1_000_000 + Int64(30 + $0 * 13 % 570) * 1_000_000 },
                valueBits: (0..<40).map { Double($0 * 37 % 900).bitPattern },
                sourceIDs: Array(repeating: 0, count: 40), arrivals: (0..<40).map { UInt64($0) + 1 }),
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

/// Version 6 snapshots with the fuzzer's block inside: the snapshot reader's block path past both checksums.
enum SnapshotBlockHarness {
    /// A snapshot of one series holding one row of a seed batch, and the range of its one block's bytes.
    static let template: (file: [UInt8], block: Range<Int>) = {
        let store = HealthStore()
        _ = try? store.insert(SeedData.batch(id: 3, rows: 1, uuids: false, metadata: false))
        let (image, sequence) = store.image(of: try! QuantityType.named("stepCount")) { UInt64(4) }
        let file = SnapshotCodec.encode(image, sequence: sequence)
        let block = BlockHarnesses.seal(BlockHarnesses.rows(image))
        return (file, file.firstRange(of: block.bytes)!)
    }()

    /// The template with `block` in place of its block: the length varint and CRC before it and the file's CRC
    /// rewritten to fit.
    static func snapshot(holding block: [UInt8]) -> [UInt8] {
        let (file, range) = template
        // The template's block is under 128 bytes: one length byte, then the 4-byte CRC.
        var out = Array(file[..<(range.lowerBound - 5)])
        var length = UInt64(block.count)
        while length >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: length) | 0x80)
            length >>= 7
        }
        out.append(UInt8(length))
        withUnsafeBytes(of: Zlib.crc32(block).littleEndian) { out.append(contentsOf: $0) }
        out += block
        out += file[range.upperBound..<(file.count - 4)]
        return StorageHarnesses.withChecksum(out)
    }

    /// The input is a block; the snapshot around it must decode or fail cleanly, and restore must not trap.
    static let harness = Harness(
        "snapshot-block", "SnapshotCodec.decode of a version 8 snapshot holding the input as its block; restore",
        seeds: {
            BlockHarnesses.seedRows().map { BlockHarnesses.seal($0).bytes } + [Array(template.file[template.block])]
        }
    ) { input in
        guard let decoded = attempt({ try SnapshotCodec.decode(snapshot(holding: input.rest())) }) else { return }
        let again = attempt {
            try SnapshotCodec.decode(SnapshotCodec.encode(decoded.image, sequence: decoded.sequence))
        }
        require(again?.image == decoded.image, "a decoded snapshot does not round-trip")
        attempt { try HealthStore().restore(decoded.image) }
    }
}
