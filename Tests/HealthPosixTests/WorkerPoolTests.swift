import HealthPosix
import Synchronization
import Testing

@Suite("WorkerPool")
struct WorkerPoolTests {
    @Test("a full queue refuses work; queued jobs all run once workers free up")
    func bounded() async throws {
        let pool = try WorkerPool(threads: 2, queueCapacity: 3, name: "test-pool")
        let gate = ConditionLock(false)
        let ran = Atomic<Int>(0)
        let blocker: @Sendable () -> Void = {
            _ = gate.wait { $0 ? true : nil }
            ran.add(1, ordering: .relaxed)
        }
        #expect(pool.submit(blocker))
        #expect(pool.submit(blocker))
        #expect(await eventually { pool.runningCount == 2 })
        for _ in 0..<3 { #expect(pool.submit { ran.add(1, ordering: .relaxed) }) }
        #expect(pool.waitingCount == 3)
        #expect(!pool.submit { ran.add(100, ordering: .relaxed) }, "a fourth waiting job must be refused")
        gate.update { $0 = true }
        #expect(await eventually { ran.load(ordering: .relaxed) == 5 })
        #expect(await eventually { pool.runningCount == 0 && pool.waitingCount == 0 })
        #expect(pool.submit { ran.add(1, ordering: .relaxed) })
        pool.shutdown()
        let total = ran.load(ordering: .relaxed)
        #expect(total == 6)
    }

    @Test("a job's captures are released once it has run, while later jobs still wait")
    func releasesFinishedJobs() async throws {
        final class Payload: Sendable {}
        let pool = try WorkerPool(threads: 1, queueCapacity: 100, name: "test-release")
        let gate = ConditionLock(false)
        weak var released: Payload?
        do {
            let payload = Payload()
            released = payload
            #expect(pool.submit { withExtendedLifetime(payload) {} })
        }
        #expect(pool.submit { _ = gate.wait { $0 ? true : nil } })
        for _ in 0..<10 { #expect(pool.submit {}) }
        // The first job ran and the worker now blocks in the second with ten jobs behind it: the queue has not
        // drained, yet nothing may keep the first job's captures alive.
        #expect(await eventually { pool.runningCount == 1 && pool.waitingCount == 10 })
        #expect(released == nil)
        gate.update { $0 = true }
        pool.shutdown()
    }

    @Test("shutdown finishes queued jobs, joins the workers and refuses new work")
    func shutdownDrains() throws {
        let pool = try WorkerPool(threads: 2, queueCapacity: 1000, name: "test-drain")
        let ran = Atomic<Int>(0)
        let threadNames = ConditionLock<Set<String>>([])
        for _ in 0..<500 {
            #expect(
                pool.submit {
                    ran.add(1, ordering: .relaxed)
                    threadNames.withLock { _ = $0.insert(currentThreadName()) }
                })
        }
        pool.shutdown()
        let total = ran.load(ordering: .relaxed)
        #expect(total == 500)
        let refused = !pool.submit { ran.add(1, ordering: .relaxed) }
        #expect(refused)
        #expect(threadNames.withLock { $0.allSatisfy { $0.hasPrefix("test-drain-") } })
        pool.shutdown()
    }
}
