import HealthModel

/// Writes the row columns of an encoded batch (Protocol/SAMPLE-BATCH.md, "Columns").
enum ColumnEncoder {
    /// Start times: the first as a zig-zag varint, the second as the delta from the first, then each as the
    /// delta-of-delta (all wrapping, so every Int64 round-trips).
    static func writeStarts(_ starts: [Timestamp], into writer: inout ByteWriter) {
        guard let first = starts.first else { return }
        writer.writeSignedVarint(first)
        var previous = first
        var previousDelta: Int64 = 0
        for start in starts.dropFirst() {
            let delta = start &- previous
            writer.writeSignedVarint(delta &- previousDelta)
            previous = start
            previousDelta = delta
        }
    }

    /// Durations: `end − start` (wrapping) as unsigned varints; a negative one takes ten bytes.
    static func writeDurations(starts: [Timestamp], ends: [Timestamp], into writer: inout ByteWriter) {
        for (start, end) in zip(starts, ends) {
            writer.writeVarint(UInt64(bitPattern: end &- start))
        }
    }

    /// Values in `encoding`, which the caller checked fits them.
    static func writeValues(_ values: [Double], encoding: ValueEncoding, into writer: inout ByteWriter) {
        switch encoding {
        case .raw:
            for value in values { writer.writeLE(value.bitPattern) }
        case .xor:
            var previous: UInt64 = 0
            for value in values {
                writer.writeVarint((value.bitPattern ^ previous).byteSwapped)
                previous = value.bitPattern
            }
        case .integerDelta:
            var previous: Int64 = 0
            for value in values {
                let integer = Int64(value)
                writer.writeSignedVarint(integer &- previous)
                previous = integer
            }
        }
    }

    /// Source indices as runs: (index varint, length varint ≥ 1) until every row is covered.
    static func writeSourceRuns(_ indices: [UInt32], into writer: inout ByteWriter) {
        var position = 0
        while position < indices.count {
            let index = indices[position]
            var runEnd = position + 1
            while runEnd < indices.count, indices[runEnd] == index { runEnd += 1 }
            writer.writeVarint(UInt64(index))
            writer.writeVarint(UInt64(runEnd - position))
            position = runEnd
        }
    }
}
