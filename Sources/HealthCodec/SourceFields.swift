import HealthModel

// A source as four strings — name, bundle identifier, version, device — the layout the protocol, the sample
// batch's source dictionary, the log and the snapshots share (PROTOCOL.md, SAMPLE-BATCH.md, STORAGE.md).

extension ByteWriter {
    /// Writes the source's four strings.
    public mutating func writeSource(_ source: SourceInfo) {
        writeString(source.name)
        writeString(source.bundleIdentifier)
        writeString(source.version)
        writeString(source.device)
    }

    /// A varint count, then each source.
    public mutating func writeSources(_ sources: [SourceInfo]) {
        writeVarint(UInt64(sources.count))
        for source in sources { writeSource(source) }
    }
}

extension ByteReader {
    /// Reads what ``ByteWriter/writeSource(_:)`` wrote.
    public mutating func readSource(_ limits: some FieldLimits) throws -> SourceInfo {
        SourceInfo(
            name: try readString(limits), bundleIdentifier: try readString(limits), version: try readString(limits),
            device: try readString(limits))
    }

    /// Reads what ``ByteWriter/writeSources(_:)`` wrote.
    public mutating func readSources(_ limits: some FieldLimits) throws -> [SourceInfo] {
        let count = try readListCount("source", limits: limits, minBytes: 4)
        var sources: [SourceInfo] = []
        sources.reserveCapacity(count)
        for _ in 0..<count { sources.append(try readSource(limits)) }
        return sources
    }
}
