import Foundation
import HealthModel
import Synchronization

/// Runs an ``ExportReader`` on a thread of its own, so the export is parsed while the batches before are sent:
/// the parse thread fills a queue of at most `depth` batches that the async side drains (``ExportImporter``).
///
/// The reader is created and used on the parse thread only; its progress reports, batches and end reach the
/// async side in order through ``pieces``. Once the async side stops (``Room/stop()``: an error in the sink, or
/// the stream's end), the parse thread stops at its next batch.
enum ParseAhead {
    /// What the parse thread hands over, in order.
    enum Piece: Sendable {
        case progress(ImportProgress)
        case batch(SampleBatch)
        /// After the last batch.
        case end(Ending)
    }

    /// What the reader holds once the last batch is out.
    struct Ending: Sendable {
        var summary: ImportSummary
        var workouts: [Workout]
        var characteristics: Characteristics
        var activitySummaries: [ActivitySummary]
        var correlations: [Correlation]
        var routes: [WorkoutRoute]
    }

    /// The queue's free places, shared by both sides. Thread-safe.
    final class Room: Sendable {
        private let free: DispatchSemaphore
        private let stopped = Atomic<Bool>(false)

        init(depth: Int) {
            // Created at 0 and raised: libdispatch traps when a semaphore is freed below its initial value, which a
            // stopped import's would be.
            free = DispatchSemaphore(value: 0)
            for _ in 0..<max(1, depth) { free.signal() }
        }

        /// Parse thread: waits for a free place for one batch; `false` once the async side stopped.
        func take() -> Bool {
            free.wait()
            return !stopped.load(ordering: .acquiring)
        }

        /// Async side: a batch left the queue.
        func give() { free.signal() }

        /// Async side: no more batches are wanted (a parse thread waiting for a place wakes up and ends).
        func stop() {
            stopped.store(true, ordering: .releasing)
            free.signal()
        }
    }

    /// Starts parsing the export at `path` on a new thread; returns what it hands over and the queue's room.
    static func start(path: String, subject: String, options: ImportOptions, depth: Int)
        -> (pieces: AsyncThrowingStream<Piece, any Error>, room: Room)
    {
        let (pieces, continuation) = AsyncThrowingStream.makeStream(of: Piece.self)
        let room = Room(depth: depth)
        continuation.onTermination = { _ in room.stop() }
        let thread = Thread {
            // Named from inside: Foundation names only the current thread on Linux.
            Thread.current.name = "hk-import-parse"
            do {
                let reader = try ExportReader(
                    path: path, subject: subject, options: options, progress: { continuation.yield(.progress($0)) },
                    readAhead: true)
                while let batch = try reader.nextBatch() {
                    guard room.take() else { break }
                    continuation.yield(.batch(batch))
                }
                let workouts = reader.takeWorkouts()
                let activitySummaries = reader.takeActivitySummaries()
                let correlations = reader.takeCorrelations()
                // Reading the route files notes their rejections in the summary: before it is taken.
                let routes = reader.takeRoutes()
                continuation.yield(
                    .end(
                        Ending(
                            summary: reader.summary, workouts: workouts, characteristics: reader.characteristics,
                            activitySummaries: activitySummaries, correlations: correlations, routes: routes)))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        thread.start()
        return (pieces, room)
    }
}
