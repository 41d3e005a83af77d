import HealthPosix
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Addresses, client sockets and signals")
struct SocketTests {
    @Test(
        "literals, bracketed IPv6 and the wildcard resolve without DNS",
        arguments: [
            ("127.0.0.1", "127.0.0.1:80", false), ("::1", "[::1]:80", true), ("[::1]", "[::1]:80", true),
            ("10.1.2.3", "10.1.2.3:80", false),
        ])
    func resolveLiterals(host: String, expected: String, isIPv6: Bool) throws {
        let addresses = try SocketAddress.resolve(host: host, port: 80)
        #expect(addresses.first?.description == expected)
        #expect(addresses.first?.isIPv6 == isIPv6)
        #expect(addresses.first?.port == 80)
    }

    @Test("a port out of range is a typed error")
    func resolveErrors() {
        let error = #expect(throws: SystemError.self) { try SocketAddress.resolve(host: "127.0.0.1", port: 70000) }
        #expect(error?.code == EINVAL)
        #expect(error?.description.contains("70000") == true)
    }

    @Test("connecting to a closed port is refused")
    func connectRefused() throws {
        let group = try EventLoopGroup(threads: 1, name: "refused")
        defer { group.shutdown() }
        let server = try TCPServer.start(group: group, configuration: .init()) { _ in
            RecordingHandler(log: HandlerLog())
        }
        let port = server.port
        server.stop()
        _ = try group.loops[0].submitAndWait { 0 }  // the listener is closed once this returns
        let error = #expect(throws: SystemError.self) {
            try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(2))
        }
        #expect(error?.code == ECONNREFUSED)
    }

    @Test("a read with nothing to read times out with ETIMEDOUT")
    func readTimeout() throws {
        let group = try EventLoopGroup(threads: 1, name: "timeout")
        defer { group.shutdown() }
        let server = try TCPServer.start(group: group, configuration: .init()) { _ in
            RecordingHandler(log: HandlerLog())
        }
        defer { server.stop() }
        let socket = try ClientSocket.connect(host: "localhost", port: server.port)
        defer { socket.close() }
        let start = Deadline.now()
        let error = #expect(throws: SystemError.self) { try socket.read(maxBytes: 10, timeout: .milliseconds(50)) }
        #expect(error?.isTimeout == true)
        #expect(Deadline.now().nanoseconds - start.nanoseconds >= 50_000_000)
        #expect(try !socket.waitForReadable(timeout: .milliseconds(10)))
    }

    @Test("shutdown wakes a reader blocked on another thread")
    func shutdownWakesReader() async throws {
        let group = try EventLoopGroup(threads: 1, name: "wake")
        defer { group.shutdown() }
        let server = try TCPServer.start(group: group, configuration: .init()) { _ in
            RecordingHandler(log: HandlerLog())
        }
        defer { server.stop() }
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        let result = ConditionLock<[UInt8]?>(nil)
        let reader = try PosixThread.spawn(name: "blocked-reader") {
            // Long: the test's polls below may wait for a thread of the test pool while other tests hold both;
            // the read must still be blocked when they run. shutdown() ends it long before.
            let bytes = (try? socket.read(maxBytes: 10, timeout: .seconds(180))) ?? [0xFF]
            result.withLock { $0 = bytes }
        }
        try await waitUntil("the reader thread to block in its read") { threadIsBlocked(named: "blocked-reader") }
        socket.shutdown()
        #expect(await eventually(timeout: .seconds(20)) { result.withLock { $0 != nil } })
        reader.join()
        #expect(result.withLock { $0 } == [])
        socket.close()
    }

    @Test("a signal watcher thread receives a signal sent to it")
    func signalWatcher() async throws {
        let received = ConditionLock<Int32?>(nil)
        let watcher = try SignalSet([SIGUSR1]).watch(name: "test-signals") { signal in
            received.withLock { $0 = signal }
        }
        try watcher.send(signal: SIGUSR1)
        #expect(await eventually(timeout: .seconds(5)) { received.withLock { $0 } != nil })
        watcher.join()
        #expect(received.withLock { $0 } == SIGUSR1)
    }
}
