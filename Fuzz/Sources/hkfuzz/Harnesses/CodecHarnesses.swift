import HealthCodec
import HealthModel

/// The sample batch codec, its metadata column, and the inflater.
enum CodecHarnesses {
    /// Limits a harness picks from by one input byte: the defaults, and tight ones that reach every count check.
    static let batchLimits: [BatchLimits] = [
        .default, BatchLimits(maxRows: 8, maxSources: 2, maxStringBytes: 16, maxMetadataEntriesPerRow: 2),
    ]

    /// Checks a decoded batch: it encodes in every encoding its values allow, and each encoding decodes to a
    /// batch that encodes to the same bytes as the first (the codec is a bijection on what it accepts).
    static func checkRoundTrip(_ batch: SampleBatch) {
        guard let canonical = attempt({ try SampleBatchCodec.encode(batch) }) else {
            require(false, "a decoded batch does not encode")
            return
        }
        for encoding in ValueEncoding.allCases {
            guard let bytes = attempt({ try SampleBatchCodec.encode(batch, valueEncoding: encoding) }) else {
                require(encoding == .integerDelta, "a decoded batch does not encode as \(encoding)")
                continue
            }
            let again = attempt { try SampleBatchCodec.decode(bytes, limits: .default) }
            require(again != nil, "a re-encoded batch (\(encoding)) does not decode")
            if let again {
                require(
                    attempt({ try SampleBatchCodec.encode(again) }) == canonical,
                    "decode(encode(batch, \(encoding))) encodes differently")
            }
        }
    }

    /// Byte 0 picks the limits; the rest is a sample batch payload.
    static let batch = Harness(
        "batch", "SampleBatchCodec.decode; every value encoding round-trips",
        seeds: {
            let payloads = Vectors.valid().filter { $0.kind == .insert }.map { Array($0.payload) }
            let generated = [SeedData.batch(), SeedData.batch(rows: 5, uuids: false, metadata: false)].flatMap {
                batch in
                ValueEncoding.allCases.compactMap { try? SampleBatchCodec.encode(batch, valueEncoding: $0) }
            }
            return (payloads + generated).map { [0] + $0 }
        }
    ) { input in
        let limits = batchLimits[input.choice(batchLimits.count)]
        guard let batch = attempt({ try SampleBatchCodec.decode(input.rest(), limits: limits) }) else { return }
        checkRoundTrip(batch)
    }

    /// The encoding of an `rows`-row batch up to its metadata column (flag set), and that column for
    /// ``SeedData/batch(id:rows:uuids:metadata:)``'s metadata.
    static func metadataFrame(rows: Int) -> (prefix: [UInt8], column: [UInt8]) {
        var empty = SeedData.batch(rows: rows, uuids: false, metadata: false)
        empty.metadata = Array(repeating: [:], count: rows)
        let emptyBytes = try! SampleBatchCodec.encode(empty, valueEncoding: .raw)
        let prefix = Array(emptyBytes.dropLast(rows))
        let full = try! SampleBatchCodec.encode(SeedData.batch(rows: rows, uuids: false), valueEncoding: .raw)
        return (prefix, Array(full.dropFirst(prefix.count)))
    }

    /// The prefixes for 1 to 4 rows, built once.
    static let metadataPrefixes = (1...4).map { metadataFrame(rows: $0).prefix }

    /// Byte 0 picks the row count (1–4) and limits; the rest is the metadata column of a batch whose other
    /// columns are fixed, so every mutation lands in the metadata codec.
    static let metadata = Harness(
        "metadata", "the metadata column of a batch (rows and limits from byte 0); round trip",
        seeds: { (1...4).map { rows in [UInt8(rows - 1)] + metadataFrame(rows: rows).column } }
    ) { input in
        let control = input.byte()
        let prefix = metadataPrefixes[Int(control) % metadataPrefixes.count]
        let limits = batchLimits[Int(control >> 2) % batchLimits.count]
        guard let batch = attempt({ try SampleBatchCodec.decode(prefix + input.rest(), limits: limits) }) else {
            return
        }
        checkRoundTrip(batch)
    }

    /// Byte 0 picks the limits; the rest is a snapshot's metadata table, a row per anchor (versions 6 to 8). A
    /// decoded table encodes to bytes that decode to a table of the same rows that encodes to the same bytes (one
    /// encoding per table).
    static let metadataTable = Harness(
        "metadata-table", "MetadataTable.decode (snapshot metadata by anchor); round trip",
        seeds: {
            var table = ByteWriter()
            let rows: [(anchor: UInt64, metadata: [String: MetadataValue])] = [
                (3, ["HKTimeZone": .string("Europe/Berlin"), "n": .number(2.5)]),
                (9, ["d": .date(-1), "q": .quantity(1.5, unit: "km")]),
            ]
            MetadataTable.encode(rows, into: &table)
            var empty = ByteWriter()
            MetadataTable.encode([(anchor: UInt64, metadata: [String: MetadataValue])](), into: &empty)
            return [[0] + table.bytes, [1] + empty.bytes]
        }
    ) { input in
        let limits = batchLimits[input.choice(batchLimits.count)]
        guard let table = attempt({ try MetadataTable.decode(ArraySlice(input.rest()), limits: limits) }) else {
            return
        }
        // Compared by encoding: a NaN number is never equal to itself, but its bits round-trip.
        var writer = ByteWriter()
        MetadataTable.encode(table, into: &writer)
        guard let again = attempt({ try MetadataTable.decode(ArraySlice(writer.bytes), limits: .default) }) else {
            require(false, "a re-encoded metadata table does not decode")
            return
        }
        require(again.count == table.count, "a re-encoded metadata table has other rows")
        var second = ByteWriter()
        MetadataTable.encode(again, into: &second)
        require(second.bytes == writer.bytes, "a metadata table has two encodings")
    }

    /// Byte 0 picks the limits; the rest is a snapshot's dictionary-encoded metadata table (version 9). A decoded
    /// table encodes to bytes that decode to the same distinct rows, anchors and indices.
    static let distinctMetadataTable = Harness(
        "metadata-table-distinct", "MetadataTable.decodeDistinct (snapshot metadata, each row once); round trip",
        seeds: {
            var table = ByteWriter()
            MetadataTable.encode(
                distinct: [["HKTimeZone": .string("Europe/Berlin")], ["n": .number(2.5)]],
                entries: [(anchor: UInt64(3), index: 0), (4, 1), (9, 0)], into: &table)
            var empty = ByteWriter()
            MetadataTable.encode(distinct: [], entries: [(anchor: UInt64, index: Int)](), into: &empty)
            return [[0] + table.bytes, [1] + empty.bytes]
        }
    ) { input in
        let limits = batchLimits[input.choice(batchLimits.count)]
        guard let table = attempt({ try MetadataTable.decodeDistinct(ArraySlice(input.rest()), limits: limits) })
        else { return }
        var writer = ByteWriter()
        MetadataTable.encode(
            distinct: table.distinct, entries: zip(table.anchors, table.indices).map { (anchor: $0, index: Int($1)) },
            into: &writer)
        guard let again = attempt({ try MetadataTable.decodeDistinct(ArraySlice(writer.bytes), limits: .default) })
        else {
            require(false, "a re-encoded metadata table does not decode")
            return
        }
        require(
            again.anchors == table.anchors && again.indices == table.indices
                && again.distinct.count == table.distinct.count, "a re-encoded metadata table has other rows")
    }

    /// Byte 0 picks the format, bytes 1–2 the output cap, byte 3 the split seed; the rest is a compressed stream.
    /// Fed in pieces it must give what one call gives (output and success), never more than the cap, and what
    /// it inflates to must deflate and inflate back.
    static let inflate = Harness(
        "inflate", "Inflater fed in pieces vs one call, zlib/raw/gzip, output cap from the input",
        seeds: {
            let text = Array(String(repeating: "stepCount 2024-03-10 08:00:00 -0500 ", count: 40).utf8)
            return ZlibFormat.allCases.enumerated().map { index, format in
                [UInt8(index), 0xFF, 0x0F, 7] + Zlib.deflate(text, level: 1, format: format)
            }
        }
    ) { input in
        let format = ZlibFormat.allCases[input.choice(ZlibFormat.allCases.count)]
        let cap = Int(input.uint16())
        let seed = UInt64(input.byte())
        let stream = input.rest()
        let whole = attempt { try Zlib.inflate(stream, maxOutput: cap, format: format) }

        let inflater = Inflater(format: format, maxOutput: cap)
        var output: [UInt8] = []
        var consumed = 0
        var start = 0
        let streamed: Bool = {
            do {
                for size in pieceSizes(count: stream.count, seed: seed, maxPiece: 300) {
                    let used = try inflater.inflate(stream[start..<start + size], into: &output)
                    require(used <= size, "the inflater used more bytes than it was given")
                    consumed += used
                    start += size
                    if inflater.isFinished { break }
                }
                try inflater.finish()
                return true
            } catch {
                return false
            }
        }()
        require(output.count <= cap, "inflated \(output.count) bytes past the cap of \(cap)")
        require((streamed && consumed == stream.count) == (whole != nil), "piecewise and one-call inflate disagree")
        guard let whole else { return }
        require(output == whole, "piecewise inflate produced other bytes")
        let again = attempt { try Zlib.inflate(Zlib.deflate(whole, format: format), maxOutput: cap, format: format) }
        require(again == whole, "deflate then inflate changed the bytes")
    }
}
