import HealthClient
import HealthModel

/// Sends items in requests so that one item the server refuses does not stop the others: a request refused for
/// its content (an error code 200–299, which sending it again cannot mend) is split in halves until each refused
/// item stands alone, and each is reported with the server's message. Any other error (the connection, a
/// permission, a full disk) is rethrown: the import as a whole cannot go on.
enum RefusalIsolation {
    /// Whether `error` refuses a request for what it holds (an invalid or conflicting item).
    static func refusesContent(_ error: HealthClientError) -> Bool {
        (200..<300).contains(error.code.rawValue)
    }

    /// Sends `items` at most `per` a request through `insert`, which returns what the server acknowledged (new,
    /// already stored); calls `refused` with each item the server refused on its own and the error. Returns the
    /// sum of the acknowledgements.
    static func send<Item>(
        _ items: [Item], per: Int, _ insert: ([Item]) async throws -> PipelinedUpload.Counts,
        refused: (Item, HealthClientError) -> Void
    ) async throws -> PipelinedUpload.Counts {
        var counts = PipelinedUpload.Counts()
        var start = 0
        while start < items.count {
            let end = min(start + max(1, per), items.count)
            counts.add(
                try await send(start..<end, { try await insert(Array(items[$0])) }, refused: { refused(items[$0], $1) })
            )
            start = end
        }
        return counts
    }

    /// Sends the rows of `batch` through `client`, a part that is not the whole batch under a batch id of its own;
    /// calls `refused` with each row the server refused on its own. With `refusedWhole` (the batch was sent and
    /// refused already) it starts from the two halves.
    static func send(
        rowsOf batch: SampleBatch, client: HealthClient, refusedWhole: Bool = false,
        refused: (Int, HealthClientError) -> Void
    ) async throws -> PipelinedUpload.Counts {
        try await send(
            0..<batch.count, startingSplit: refusedWhole,
            { rows in
                var part = batch
                if rows.count != batch.count {
                    part = batch.rows(rows)
                    part.batchID = HealthClient.makeBatchID()
                }
                let ack = try await client.insert(part)
                return PipelinedUpload.Counts(inserted: Int(ack.inserted), duplicates: Int(ack.duplicates))
            }, refused: refused)
    }

    /// Sends `range` through `insert`, halving a part the server refuses for its content until each refused
    /// position stands alone (`startingSplit`: the whole range was refused already).
    private static func send(
        _ range: Range<Int>, startingSplit: Bool = false, _ insert: (Range<Int>) async throws -> PipelinedUpload.Counts,
        refused: (Int, HealthClientError) -> Void
    ) async throws -> PipelinedUpload.Counts {
        var counts = PipelinedUpload.Counts()
        var pending = startingSplit && range.count > 1 ? halves(range) : [range]
        while let part = pending.popLast() {
            do {
                counts.add(try await insert(part))
            } catch let error as HealthClientError where refusesContent(error) {
                if part.count == 1 { refused(part.lowerBound, error) } else { pending += halves(part) }
            }
        }
        return counts
    }

    /// The two halves of `range`, the first last (popped first).
    private static func halves(_ range: Range<Int>) -> [Range<Int>] {
        let middle = range.lowerBound + range.count / 2
        return [middle..<range.upperBound, range.lowerBound..<middle]
    }
}
