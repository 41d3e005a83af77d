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
            var pending = [start..<end]
            while let range = pending.popLast() {
                do {
                    let ack = try await insert(Array(items[range]))
                    counts.inserted += ack.inserted
                    counts.duplicates += ack.duplicates
                } catch let error as HealthClientError where refusesContent(error) {
                    if range.count == 1 {
                        refused(items[range.lowerBound], error)
                    } else {
                        let middle = range.lowerBound + range.count / 2
                        pending += [middle..<range.upperBound, range.lowerBound..<middle]
                    }
                }
            }
            start = end
        }
        return counts
    }
}
