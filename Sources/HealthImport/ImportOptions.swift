/// Settings of an import.
public struct ImportOptions: Hashable, Sendable {
    /// Most rows per batch handed to the sink (at least 1).
    public var batchSize: Int
    /// Most rows held in unfinished batches of all types together; past it the largest is sent early, so
    /// memory stays bounded however many types and units the file mixes.
    public var maxPendingRows: Int
    /// File bytes read between two progress reports.
    public var progressInterval: Int64
    /// Line numbers kept per rejection reason.
    public var maxLinesPerReason: Int

    /// Options; the defaults send batches of 10,000 rows and report progress every MiB.
    public init(
        batchSize: Int = 10_000, maxPendingRows: Int = 100_000, progressInterval: Int64 = 1 << 20,
        maxLinesPerReason: Int = 5
    ) {
        self.batchSize = max(1, batchSize)
        self.maxPendingRows = max(1, maxPendingRows)
        self.progressInterval = max(1, progressInterval)
        self.maxLinesPerReason = max(0, maxLinesPerReason)
    }
}
