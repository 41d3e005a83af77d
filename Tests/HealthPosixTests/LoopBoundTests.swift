import HealthPosix
import Synchronization
import Testing

@Suite("LoopBoundBox")
struct LoopBoundTests {
    /// A value that is not `Sendable`: the box is what carries it across the closures.
    final class Counter {
        var count = 0
        var log: [String] = []
    }

    struct State {
        var count = 0
        var names: [String] = []
        var counter = Counter()
    }

    @Test("reads and writes on the loop thread work, in place")
    func accessOnLoop() throws {
        let loop = try EventLoop(name: "test-bound")
        defer { loop.shutdown() }
        let box = LoopBoundBox(State(), loop: loop)
        #expect(box.loop === loop)
        let seen = try loop.submitAndWait {
            box.value.count += 1
            box.value.names.append("a")
            box.value.names.append("b")
            box.value.counter.count = 7
            return (box.value.count, box.value.names, box.value.counter.count)
        }
        #expect(seen.0 == 1)
        #expect(seen.1 == ["a", "b"])
        #expect(seen.2 == 7)
    }

    @Test("a value set on the loop is seen by later tasks, timers and hops back from other threads")
    func laterTasksSeeValue() async throws {
        let loop = try EventLoop(name: "test-bound-later")
        let workers = try WorkerPool(threads: 2, queueCapacity: 1_000, name: "test-bound-workers")
        defer {
            workers.shutdown()
            loop.shutdown()
        }
        let box = LoopBoundBox(State(), loop: loop)
        loop.execute { box.value.count = 41 }
        let inTask = try loop.submitAndWait { box.value.count }
        #expect(inTask == 41)

        // A timer set later sees the value, and what it sets is seen by the next task.
        let fromTimer = ConditionLock<Int?>(nil)
        loop.schedule(after: .milliseconds(10)) {
            box.value.count += 1
            fromTimer.withLock { $0 = box.value.count }
        }
        #expect(await eventually { fromTimer.withLock { $0 } != nil })
        #expect(fromTimer.withLock { $0 } == 42)
        #expect(try loop.submitAndWait { box.value.count } == 42)

        // Workers never touch the box: they hop back with loop.execute, and the hops' changes accumulate.
        let jobs = 200
        let done = Atomic<Int>(0)
        for index in 0..<jobs {
            let accepted = workers.submit {
                let name = "job-\(index)"
                loop.execute {
                    box.value.names.append(name)
                    box.value.counter.log.append(name)
                    done.add(1, ordering: .releasing)
                }
            }
            #expect(accepted)
        }
        #expect(await eventually { done.load(ordering: .acquiring) == jobs })
        let (names, log) = try loop.submitAndWait { (box.value.names, box.value.counter.log) }
        #expect(names.count == jobs)
        #expect(Set(names).count == jobs)
        #expect(log == names)
    }

    @Test("a box of an optional starts empty and can be set and cleared")
    func optionalValue() throws {
        let loop = try EventLoop(name: "test-bound-optional")
        defer { loop.shutdown() }
        let box = LoopBoundBox<Duration?>(nil, loop: loop)
        let values = try loop.submitAndWait {
            let before = box.value
            box.value = .milliseconds(5)
            let set = box.value
            box.value = nil
            return [before, set, box.value]
        }
        #expect(values == [nil, .milliseconds(5), nil])
    }
}
