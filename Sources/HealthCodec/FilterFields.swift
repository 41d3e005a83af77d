import HealthModel

// A sample filter, as the protocol and the log's delete records carry it (PROTOCOL.md, STORAGE.md): a flags
// byte (bit 0 start, 1 end, 2 strictStartDate, 3 strictEndDate, 4 sources, 5 UUIDs, 6 writer, 7 value bounds),
// the present bounds as zig-zag varints, the sources (sorted strings), the UUIDs (sorted), the writer id as a
// varint, then the value bounds: a byte (bit 0 lower, 1 upper, 2 lower exclusive, 3 upper exclusive, 7 category
// values), the present bounds as little-endian f64, the category values (varint n, n sorted zig-zag raw values), the
// unit string (empty: canonical). Without value bounds, flag bit 7 is clear and nothing follows the writer;
// without category values, bit 7 of the bounds byte is clear and no list follows.
// The writer restriction is the server's own (an identity without read sees what it wrote): the log keeps it,
// the protocol never carries it.

extension ByteWriter {
    /// Writes the filter; its writer restriction only when `carryingWriter` (the log), never on the wire.
    public mutating func writeFilter(_ filter: SampleFilter, carryingWriter: Bool) {
        let date = filter.date
        let writer = carryingWriter ? filter.writer : nil
        var flags: UInt8 = 0
        if date.start != nil { flags |= 1 << 0 }
        if date.end != nil { flags |= 1 << 1 }
        if date.strictStartDate { flags |= 1 << 2 }
        if date.strictEndDate { flags |= 1 << 3 }
        if filter.sources != nil { flags |= 1 << 4 }
        if filter.uuids != nil { flags |= 1 << 5 }
        if writer != nil { flags |= 1 << 6 }
        if filter.values != nil || filter.metadata != nil { flags |= 1 << 7 }
        write(flags)
        if let start = date.start { writeSignedVarint(start) }
        if let end = date.end { writeSignedVarint(end) }
        if let sources = filter.sources { writeStrings(sources.sorted()) }
        if let uuids = filter.uuids { writeUUIDs(uuids.sorted { $0.uuidString < $1.uuidString }) }
        if let writer { writeVarint(UInt64(writer)) }
        if filter.values != nil || filter.metadata != nil {
            writeValueBounds(filter.values ?? ValueBounds(), metadata: filter.metadata)
        }
    }

    /// Writes value bounds: which are present and exclusive, the f64 bounds, the category values, the metadata
    /// predicates (bit 6: `varint n`, then per predicate its key, `u8` 1 with allowed values or 0 without, and the
    /// values as `varint m` and `m` × (`u8` 0 then a string, or `u8` 1 then an f64)), the unit.
    mutating func writeValueBounds(_ values: ValueBounds, metadata: [MetadataPredicate]? = nil) {
        var bits: UInt8 = 0
        if values.lower != nil { bits |= 1 << 0 }
        if values.upper != nil { bits |= 1 << 1 }
        if !values.lowerInclusive { bits |= 1 << 2 }
        if !values.upperInclusive { bits |= 1 << 3 }
        if values.categoryValues != nil { bits |= 1 << 7 }
        if metadata != nil { bits |= 1 << 6 }
        write(bits)
        if let lower = values.lower { writeDouble(lower) }
        if let upper = values.upper { writeDouble(upper) }
        if let categories = values.categoryValues {
            writeVarint(UInt64(categories.count))
            for raw in categories.sorted() { writeSignedVarint(Int64(raw)) }
        }
        if let metadata {
            writeVarint(UInt64(metadata.count))
            for predicate in metadata {
                writeString(predicate.key)
                write(predicate.allowedValues == nil ? 0 : 1)
                guard let allowed = predicate.allowedValues else { continue }
                let written = allowed.filter {
                    if case .string = $0 { true } else if case .number = $0 { true } else { false }
                }
                writeVarint(UInt64(written.count))
                for value in written {
                    switch value {
                    case .string(let text):
                        write(0)
                        writeString(text)
                    case .number(let number):
                        write(1)
                        writeDouble(number)
                    case .date, .quantity: break
                    }
                }
            }
        }
        writeString(values.unit)
    }
}

extension ByteReader {
    /// Reads what ``ByteWriter/writeFilter(_:carryingWriter:)`` wrote; with `carryingWriter` false a writer
    /// bit is an unknown flag.
    public mutating func readFilter(_ limits: some FieldLimits, carryingWriter: Bool) throws -> SampleFilter {
        let flags = try readByte()
        let unknown: UInt8 = carryingWriter ? 0 : 0b0100_0000
        guard flags & unknown == 0 else {
            throw CodecError(.malformedPayload, "unknown filter flag bits 0x\(hex(flags & unknown))")
        }
        var date = DatePredicate(strictStartDate: flags & 1 << 2 != 0, strictEndDate: flags & 1 << 3 != 0)
        if flags & 1 << 0 != 0 { date.start = try readSignedVarint() }
        if flags & 1 << 1 != 0 { date.end = try readSignedVarint() }
        var filter = SampleFilter(date: date)
        if flags & 1 << 4 != 0 { filter.sources = Set(try readStrings("filter source", limits: limits)) }
        if flags & 1 << 5 != 0 { filter.uuids = Set(try readUUIDs(limits)) }
        if flags & 1 << 6 != 0 {
            let value = try readVarint()
            guard let writer = UInt32(exactly: value) else {
                throw CodecError(.malformedPayload, "filter writer id \(value) is out of range")
            }
            filter.writer = writer
        }
        if flags & 1 << 7 != 0 {
            let (values, metadata) = try readValueBounds(limits)
            filter.values = values
            filter.metadata = metadata
        }
        return filter
    }

    /// Reads what ``ByteWriter/writeValueBounds(_:metadata:)`` wrote; unknown bits and a NaN bound are
    /// malformed. Bounds that carry only metadata predicates (bit 6, nothing else) come back as `nil` bounds.
    mutating func readValueBounds(_ limits: some FieldLimits) throws -> (ValueBounds?, [MetadataPredicate]?) {
        let bits = try readByte()
        guard bits & 0b0011_0000 == 0 else {
            throw CodecError(.malformedPayload, "unknown value bound bits 0x\(hex(bits & 0b0011_0000))")
        }
        var values = ValueBounds(lowerInclusive: bits & 1 << 2 == 0, upperInclusive: bits & 1 << 3 == 0)
        if bits & 1 << 0 != 0 { values.lower = try readDouble() }
        if bits & 1 << 1 != 0 { values.upper = try readDouble() }
        for bound in [values.lower, values.upper].compactMap({ $0 }) where bound.isNaN {
            throw CodecError(.malformedPayload, "a value bound is NaN")
        }
        if bits & 1 << 7 != 0 {
            let count = try readListCount("category value", limits: limits)
            var categories = Set<Int>()
            for _ in 0..<count {
                let offset = self.offset
                let raw = try readSignedVarint()
                guard let value = Int(exactly: raw), categories.insert(value).inserted else {
                    throw CodecError(.malformedPayload, "category value \(raw) at byte \(offset) is repeated")
                }
            }
            values.categoryValues = categories
        }
        var metadata: [MetadataPredicate]?
        if bits & 1 << 6 != 0 {
            let count = try readListCount("metadata predicate", limits: limits, minBytes: 2)
            var predicates: [MetadataPredicate] = []
            predicates.reserveCapacity(count)
            for _ in 0..<count {
                let key = try readString(limits)
                let offset = self.offset
                switch try readByte() {
                case 0: predicates.append(MetadataPredicate(key: key))
                case 1:
                    let valueCount = try readListCount("allowed value", limits: limits, minBytes: 2)
                    var allowed: [MetadataValue] = []
                    allowed.reserveCapacity(valueCount)
                    for _ in 0..<valueCount {
                        let at = self.offset
                        switch try readByte() {
                        case 0: allowed.append(.string(try readString(limits)))
                        case 1: allowed.append(.number(try readDouble()))
                        case let tag:
                            throw CodecError(.malformedPayload, "unknown allowed value tag \(tag) at byte \(at)")
                        }
                    }
                    predicates.append(MetadataPredicate(key: key, allowedValues: allowed))
                case let mode:
                    throw CodecError(.malformedPayload, "unknown metadata predicate mode \(mode) at byte \(offset)")
                }
            }
            metadata = predicates
        }
        values.unit = try readString(limits)
        if metadata != nil, bits & 0b1011_1111 == 0, values.unit.isEmpty { return (nil, metadata) }
        return (values, metadata)
    }
}
