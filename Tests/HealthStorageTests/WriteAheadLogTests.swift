import Foundation
import HealthModel
import HealthPosix
import Synchronization
import Testing

@testable import HealthStorage

/// The write-ahead log's own promises, below the store: group commit and rotation together.
@Suite("write-ahead log")
struct WriteAheadLogTests {
    @Test("a rotation that fsyncs a record wakes its waiter: durable appends never stall behind snapshots")
    func rotationWakesWaiters() throws {
        let directory = try makeDataDirectory()
        defer { try? FileSystem.removeTree(directory) }
        let log = try WriteAheadLog(directory: directory, nextSequence: 1, policy: .always)
        defer { log.close() }
        let rounds = 2_000
        let finished = ConditionLock(0)
        let rotating = Atomic<Bool>(true)
        // A snapshot thread rotating as fast as it can while one writer appends and waits, as `hkq admin backup`
        // under load does. A rotation that syncs the writer's record without waking it leaves the writer asleep.
        let rotator = try PosixThread.spawn(name: "test-rotator") {
            while rotating.load(ordering: .relaxed) { _ = try? log.rotate() }
        }
        let writer = try PosixThread.spawn(name: "test-writer") {
            for _ in 0..<rounds {
                guard let sequence = try? log.append(kind: .insert, payload: [1, 2, 3]),
                    (try? log.waitUntilDurable(sequence)) != nil
                else { break }
                finished.update { $0 += 1 }
            }
        }
        let done = finished.wait(until: .after(.seconds(20))) { $0 == rounds ? true : nil } ?? false
        rotating.store(false, ordering: .relaxed)
        if !done { log.close() }  // Fails the stalled wait, so that the writer thread can be joined.
        writer.join()
        rotator.join()
        #expect(done, "the writer stalled after \(finished.withLock { $0 }) of \(rounds) durable appends")
    }
}
