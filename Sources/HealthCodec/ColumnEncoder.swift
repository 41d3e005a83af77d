import HealthModel

/// Writes the row columns of an encoded batch (Protocol/SAMPLE-BATCH.md, "Columns"), varints straight into the
/// writer's memory.
enum ColumnEncoder {
    /// Writes `count` varints, the `i`th being `value(i)`, with no per-byte bounds or capacity checks.
    @inline(__always)
    private static func writeVarints(_ count: Int, into writer: inout ByteWriter, _ value: (Int) -> UInt64) {
        guard count > 0 else { return }
        writer.append(maxCount: count * Varint.maxLength) { out in
            var written = 0
            for i in 0..<count { written += Varint.encode(value(i), to: out + written) }
            return written
        }
    }

    /// Start times: the first as a zig-zag varint, the second as the delta from the first, then each as the
    /// delta-of-delta (all wrapping, so every Int64 round-trips).
    static func writeStarts(_ starts: [Timestamp], into writer: inout ByteWriter) {
        starts.withUnsafeBufferPointer { starts in
            var previous: Int64 = 0
            var previousDelta: Int64 = 0
            writeVarints(starts.count, into: &writer) { i in
                let delta = starts[i] &- previous
                let encoded = ByteWriter.zigzag(delta &- previousDelta)
                previous = starts[i]
                previousDelta = i == 0 ? 0 : delta
                return encoded
            }
        }
    }

    /// Durations `end − start` as zig-zag varints of the change from the previous row's duration (0 before the
    /// first), wrapping: a constant duration takes one byte a row.
    static func writeDurations(starts: [Timestamp], ends: [Timestamp], into writer: inout ByteWriter) {
        starts.withUnsafeBufferPointer { starts in
            ends.withUnsafeBufferPointer { ends in
                var previous: Int64 = 0
                writeVarints(starts.count, into: &writer) { i in
                    let duration = ends[i] &- starts[i]
                    defer { previous = duration }
                    return ByteWriter.zigzag(duration &- previous)
                }
            }
        }
    }

    /// Values in `encoding`, which the caller checked fits them.
    static func writeValues(_ values: [Double], encoding: ValueEncoding, into writer: inout ByteWriter) {
        values.withUnsafeBufferPointer { values in
            switch encoding {
            case .raw:
                for value in values { writer.writeLE(value.bitPattern) }
            case .xor:
                var previous: UInt64 = 0
                writeVarints(values.count, into: &writer) { i in
                    defer { previous = values[i].bitPattern }
                    return (values[i].bitPattern ^ previous).byteSwapped
                }
            case .integerDelta:
                var previous: Int64 = 0
                writeVarints(values.count, into: &writer) { i in
                    let integer = Int64(values[i])
                    defer { previous = integer }
                    return ByteWriter.zigzag(integer &- previous)
                }
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
