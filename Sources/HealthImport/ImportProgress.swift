/// How far an import has got; handed to the progress callback.
public struct ImportProgress: Hashable, Sendable {
    /// Bytes of the file read so far (compressed bytes for a zip).
    public var bytesRead: Int64
    /// Size of what is read: the compressed size of export.xml in a zip, the file size for a plain export.xml.
    public var totalBytes: Int64
    /// Top-level `<Record>` elements read so far.
    public var recordsSeen: Int
    /// Samples handed out in batches so far.
    public var samplesImported: Int

    /// A progress report.
    public init(bytesRead: Int64, totalBytes: Int64, recordsSeen: Int, samplesImported: Int) {
        self.bytesRead = bytesRead
        self.totalBytes = totalBytes
        self.recordsSeen = recordsSeen
        self.samplesImported = samplesImported
    }

    /// ``bytesRead`` over ``totalBytes``, from 0 to 1.
    public var fraction: Double { totalBytes > 0 ? min(1, Double(bytesRead) / Double(totalBytes)) : 1 }
}
