import Foundation
import HealthClient

/// Uploads samples and waits until every batch is acknowledged; returns how many rows were stored.
/// Each sample's UUID is derived from its content, so uploading the same lines again (after a crash, a
/// restart, a retry) stores nothing twice.
func upload(_ samples: [Sample], to client: HealthClient) async throws -> Int {
    let uploader = SampleUploader(client: client, maxRows: 5_000)
    let outcomes = Task {
        var stored = 0
        for await outcome in uploader.outcomes {
            switch outcome {
            case .acknowledged(let ack): stored += Int(ack.inserted)
            case .rejected(_, let rows, let error): print("rejected \(rows) rows: \(error)")
            }
        }
        return stored
    }
    for sample in samples { await uploader.add(try sample.withStableID()) }
    await uploader.finish()
    return await outcomes.value
}
