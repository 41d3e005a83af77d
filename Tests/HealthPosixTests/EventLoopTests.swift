import HealthPosix
import Synchronization
import TestSupport
import Testing

@Suite("EventLoop")
struct EventLoopTests {
    @Test("tasks from several threads run on the loop thread, in order per submitting thread")
    func executeOrdering() async throws {
        let loop = try EventLoop(name: "test-order")
        defer { loop.shutdown() }
        let seen = ConditionLock<[[Int]]>(Array(repeating: [], count: 4))
        let offLoop = Atomic<Int>(0)
        let failures = try await runOnThreads(4) { thread in
            for value in 0..<2_000 {
                loop.execute {
                    if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
                    seen.withLock { $0[thread].append(value) }
                }
            }
        }
        #expect(failures.isEmpty)
        #expect(await eventually { seen.withLock { $0.allSatisfy { $0.count == 2_000 } } })
        #expect(seen.withLock { $0.allSatisfy { $0 == Array(0..<2_000) } })
        let offLoopCount = offLoop.load(ordering: .relaxed)
        #expect(offLoopCount == 0)
        #expect(!loop.inEventLoop)
    }

    @Test("a task submitted from the loop thread runs after the current one")
    func executeFromLoop() async throws {
        let loop = try EventLoop(name: "test-nested")
        defer { loop.shutdown() }
        let order = ConditionLock<[String]>([])
        loop.execute {
            loop.execute { order.withLock { $0.append("inner") } }
            order.withLock { $0.append("outer") }
        }
        #expect(await eventually { order.withLock { $0.count == 2 } })
        #expect(order.withLock { $0 } == ["outer", "inner"])
    }

    @Test("timers fire in deadline order, not before their delay, and cancelled ones never fire")
    func timers() async throws {
        let loop = try EventLoop(name: "test-timers")
        defer { loop.shutdown() }
        let fired = ConditionLock<[String]>([])
        let start = Deadline.now()
        let late = loop.schedule(after: .milliseconds(120)) { fired.withLock { $0.append("late") } }
        loop.schedule(after: .milliseconds(40)) { fired.withLock { $0.append("early") } }
        let cancelled = loop.schedule(after: .milliseconds(60)) { fired.withLock { $0.append("cancelled") } }
        cancelled.cancel()
        let firstTime = ConditionLock<Deadline?>(nil)
        loop.schedule(after: .milliseconds(20)) {
            firstTime.withLock { $0 = .now() }
            fired.withLock { $0.append("first") }
        }
        #expect(await eventually { fired.withLock { $0.count == 3 } })
        #expect(fired.withLock { $0 } == ["first", "early", "late"])
        #expect(cancelled.isDone)
        #expect(late.isDone)
        let elapsed = firstTime.withLock { $0 }!.nanoseconds - start.nanoseconds
        #expect(elapsed >= 20_000_000)
    }

    @Test("a timer scheduled from another thread wakes a loop sleeping on a later timer")
    func timerWakesLoop() async throws {
        let loop = try EventLoop(name: "test-wake")
        defer { loop.shutdown() }
        let fired = Atomic<Bool>(false)
        loop.schedule(after: .seconds(30)) {}
        try await waitUntil("the loop to sleep on its 30 s timer") { threadIsBlocked(named: "test-wake") }
        loop.schedule(after: .milliseconds(10)) { fired.store(true, ordering: .relaxed) }
        // Well below the 30 s timer: a loop that did not wake would miss it.
        #expect(await eventually(timeout: .seconds(10)) { fired.load(ordering: .relaxed) })
    }

    @Test("many cancelled timers are swept and the rest still fire")
    func cancelledTimersSwept() async throws {
        let loop = try EventLoop(name: "test-sweep")
        defer { loop.shutdown() }
        let count = Atomic<Int>(0)
        let handles = (0..<1_000).map { _ in loop.schedule(after: .seconds(60)) { count.add(1, ordering: .relaxed) } }
        for handle in handles { handle.cancel() }
        for _ in 0..<10 { loop.schedule(after: .milliseconds(5)) { count.add(1, ordering: .relaxed) } }
        #expect(await eventually { count.load(ordering: .relaxed) == 10 })
        #expect(handles.allSatisfy { $0.isDone })
    }

    @Test("shutdown runs queued tasks, drops timers, joins the thread and releases the loop")
    func shutdownJoins() async throws {
        weak var weakLoop: EventLoop?
        let ran = Atomic<Int>(0)
        let timerRan = Atomic<Bool>(false)
        do {
            let loop = try EventLoop(name: "test-shutdown")
            weakLoop = loop
            loop.execute { ran.add(1, ordering: .relaxed) }
            loop.schedule(after: .seconds(30)) { timerRan.store(true, ordering: .relaxed) }
            loop.shutdown()
            let ranBeforeShutdownReturned = ran.load(ordering: .relaxed)
            #expect(ranBeforeShutdownReturned == 1)
            let accepted = loop.execute { ran.add(1, ordering: .relaxed) }
            #expect(!accepted)
            loop.shutdown()
        }
        #expect(weakLoop == nil, "the loop thread still holds the loop")
        let ranTotal = ran.load(ordering: .relaxed)
        #expect(ranTotal == 1)
        let timerFired = timerRan.load(ordering: .relaxed)
        #expect(!timerFired)
    }

    @Test("submitAndWait returns the loop's result and rethrows its error")
    func submitAndWait() async throws {
        let loop = try EventLoop(name: "test-submit")
        defer { loop.shutdown() }
        #expect(try loop.submitAndWait { loop.inEventLoop })
        #expect(throws: SystemError.self) {
            try loop.submitAndWait { () throws -> Int in throw SystemError(errno: 5, call: "test") }
        }
    }

    @Test("registrations come and go with the connections on a loop")
    func registration() async throws {
        let loop = try EventLoop(name: "test-register")
        defer { loop.shutdown() }
        let group = try EventLoopGroup(threads: 1, name: "test-reg-server")
        defer { group.shutdown() }
        // A socket pair made of a server and a client exercises register/modify/deregister on a real fd.
        let log = HandlerLog()
        let server = try TCPServer.start(group: group, configuration: .init()) { _ in RecordingHandler(log: log) }
        defer { server.stop() }
        let client = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        try client.write([1, 2, 3])
        #expect(await eventually { log.receivedCount == 3 })
        let registrations = try group.loops[0].submitAndWait { group.loops[0].registrationCount }
        #expect(registrations == 2)  // the listener and the connection
        client.close()
        #expect(await eventually { log.closeCount == 1 })
        #expect(try group.loops[0].submitAndWait { group.loops[0].registrationCount } == 1)
    }

    @Test("a group hands out its loops round-robin")
    func groupRoundRobin() throws {
        let group = try EventLoopGroup(threads: 3, name: "test-group")
        defer { group.shutdown() }
        let picked = (0..<6).map { _ in ObjectIdentifier(group.next()) }
        #expect(Set(picked).count == 3)
        #expect(Array(picked[0..<3]) == Array(picked[3..<6]))
        let minimal = try EventLoopGroup(threads: 0, name: "test-min")
        #expect(minimal.loops.count == 1)
        minimal.shutdown()
    }
}
