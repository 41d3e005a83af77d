import HealthPosix
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("TCPServer and Connection")
struct TCPServerTests {
    @Test("many concurrent clients each get their own bytes echoed back")
    func echoManyClients() async throws {
        let group = try EventLoopGroup(threads: 2, name: "echo")
        defer { group.shutdown() }
        let log = HandlerLog()
        let server = try TCPServer.start(group: group, configuration: .init()) { _ in EchoHandler(log: log) }
        defer { server.stop() }
        let port = server.port
        let failures = try await runOnThreads(32) { index in
            let socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
            defer { socket.close() }
            for round in 0..<20 {
                let message = patternBytes(100 + index * 37 + round, seed: UInt64(index * 1000 + round))
                try socket.write(message, timeout: .seconds(5))
                let echoed = try readBytes(socket, count: message.count, timeout: .seconds(5))
                if echoed != message { throw SystemError(errno: EIO, call: "echo mismatch \(index)/\(round)") }
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(server.acceptedCount == 32)
        #expect(await eventually { log.closeCount == 32 })
        #expect(log.read { $0.opened } == 32)
        #expect(log.read { $0.closes.allSatisfy { $0 == nil } })
        #expect(server.connectionCount == 0)
    }

    @Test("a reserved port refuses connections until the server listens on it, then serves them")
    func reservedPortRefusesUntilListening() throws {
        let listener = try ListeningSocket.reserve(host: "127.0.0.1", port: 0)
        #expect(listener.address.port != 0)
        do throws(SystemError) {
            _ = try ClientSocket.connect(host: "127.0.0.1", port: listener.address.port, timeout: .seconds(5))
            Issue.record("a reserved port accepted a connection")
        } catch {
            #expect(error.code == ECONNREFUSED, "\(error)")
        }
        let group = try EventLoopGroup(threads: 1, name: "reserved")
        defer { group.shutdown() }
        let server = try TCPServer.start(group: group, listener: listener, configuration: .init()) { _ in
            EchoHandler(log: HandlerLog())
        }
        defer { server.stop() }
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        defer { socket.close() }
        try socket.write([1, 2, 3], timeout: .seconds(5))
        #expect(try readBytes(socket, count: 3, timeout: .seconds(5)) == [1, 2, 3])
    }

    @Test("a 16 MB payload goes through intact, in both directions, with the echo backed up")
    func largePayload() async throws {
        let group = try EventLoopGroup(threads: 2, name: "big")
        defer { group.shutdown() }
        let log = HandlerLog()
        let server = try TCPServer.start(
            group: group, configuration: .init(waterMarks: WaterMarks(low: 64 * 1024, high: 512 * 1024))
        ) { _ in EchoHandler(log: log) }
        defer { server.stop() }
        let payload = largePattern(16 * 1024 * 1024)
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        defer { socket.close() }
        // A writer thread pushes everything while this side reads: neither side may deadlock.
        let writeError = ConditionLock<SystemError?>(nil)
        let writer = try PosixThread.spawn(name: "big-writer") {
            do throws(SystemError) {
                try socket.write(payload, timeout: .seconds(30))
            } catch {
                writeError.withLock { $0 = error }
            }
        }
        var echoed: [UInt8] = []
        let reader = ConditionLock<[UInt8]>([])
        let readerThread = try PosixThread.spawn(name: "big-reader") {
            // Read nothing until the server's echo queue has passed its high-water mark: short writes,
            // EAGAIN and the wait for EPOLLOUT are then certain, whatever the machine's speed.
            _ = log.wait(until: .after(.seconds(30))) { !$0.writability.isEmpty }
            var received: [UInt8] = []
            received.reserveCapacity(payload.count)
            while received.count < payload.count {
                guard let chunk = try? socket.read(maxBytes: 64 * 1024, timeout: .seconds(30)), !chunk.isEmpty else {
                    break
                }
                received += chunk
            }
            reader.withLock { $0 = received }
        }
        #expect(await eventually(timeout: .seconds(60)) { reader.withLock { $0.count == payload.count } })
        readerThread.join()
        writer.join()
        echoed = reader.withLock { $0 }
        #expect(writeError.withLock { $0 } == nil)
        #expect(echoed.count == payload.count)
        #expect(sameBytes(echoed, payload))
        // The late reader pushed the echo queue over the high-water mark: the hook paused and resumed reading.
        let writability = log.read { $0.writability }
        #expect(writability.first == false)
        #expect(writability.last == true)
        #expect(writability.count % 2 == 0)
    }

    @Test("connections beyond the limit get the refusal message and are closed")
    func maxConnections() async throws {
        let group = try EventLoopGroup(threads: 2, name: "limit")
        defer { group.shutdown() }
        let log = HandlerLog()
        let refusal: [UInt8] = Array("busy: too many connections".utf8)
        let server = try TCPServer.start(
            group: group, configuration: .init(maxConnections: 3, refusalMessage: refusal)
        ) { _ in RecordingHandler(log: log) }
        defer { server.stop() }
        var admitted: [ClientSocket] = []
        for _ in 0..<3 {
            admitted.append(try ClientSocket.connect(host: "127.0.0.1", port: server.port))
        }
        #expect(await eventually { log.read { $0.opened } == 3 })
        let extra = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        try extra.write(Array("hello".utf8))
        #expect(try readBytes(extra, count: refusal.count + 1, timeout: .seconds(5)) == refusal)
        #expect(server.refusedCount == 1)
        #expect(server.connectionCount == 3)
        // Once one admitted client leaves, a new one is accepted.
        admitted[0].close()
        #expect(await eventually { server.connectionCount == 2 })
        let replacement = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        try replacement.write([7])
        #expect(await eventually { log.read { $0.opened } == 4 && log.receivedCount == 1 })
        #expect(server.refusedCount == 1)
        extra.close()
        replacement.close()
        for socket in admitted { socket.close() }
    }

    @Test("a peer that resets the connection is reported once, with the error")
    func peerReset() async throws {
        let group = try EventLoopGroup(threads: 1, name: "reset")
        defer { group.shutdown() }
        let log = HandlerLog()
        let server = try TCPServer.start(group: group, configuration: .init()) { _ in
            RecordingHandler(log: log) { connection in connection.write(Array(repeating: 1, count: 1000)) }
        }
        defer { server.stop() }
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        #expect(try socket.waitForReadable(timeout: .seconds(5)))
        socket.close()  // unread input: the kernel answers with a reset instead of a FIN
        #expect(await eventually { log.closeCount == 1 })
        // The sleep is the behaviour under test: a quiet period in which no second close may be reported.
        try await Task.sleep(for: .milliseconds(50))
        #expect(log.closeCount == 1)
        #expect(log.read { $0.closes[0]?.code } == ECONNRESET)
        #expect(server.connectionCount == 0)
    }

    @Test("a peer closing is reported to the handler exactly once, as an orderly close")
    func peerClose() async throws {
        let group = try EventLoopGroup(threads: 1, name: "peer")
        defer { group.shutdown() }
        let log = HandlerLog()
        let server = try TCPServer.start(group: group, configuration: .init()) { _ in RecordingHandler(log: log) }
        defer { server.stop() }
        let polite = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        try polite.write([1, 2, 3, 4])
        try polite.shutdownWrite()
        #expect(await eventually { log.closeCount == 1 })
        #expect(log.read { $0.received } == [1, 2, 3, 4])
        #expect(log.read { $0.closes[0] } == nil)
        // The server closed in turn: the client sees end of stream.
        #expect(try polite.read(maxBytes: 16, timeout: .seconds(5)).isEmpty)
        polite.close()
        // The sleep is the behaviour under test: a quiet period in which no second close may be reported.
        try await Task.sleep(for: .milliseconds(50))
        #expect(log.closeCount == 1)
        #expect(server.connectionCount == 0)
    }

    @Test("server-side close and closeAfterFlush deliver queued bytes, then end of stream")
    func serverClose() async throws {
        let group = try EventLoopGroup(threads: 1, name: "close")
        defer { group.shutdown() }
        let log = HandlerLog()
        let goodbye = patternBytes(300_000, seed: 9)
        let server = try TCPServer.start(group: group, configuration: .init()) { _ in
            RecordingHandler(log: log) { connection in
                connection.write(goodbye)
                connection.closeAfterFlush()
                connection.write([1, 2, 3])  // dropped: the connection is closing
            }
        }
        defer { server.stop() }
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        try socket.write(Array(repeating: 0xAB, count: 1000))  // unread input must not turn the close into a reset
        // The sleep is part of the scenario, not synchronisation: it lets the input reach the server and lie
        // there unread while it closes (nothing observable says it has arrived).
        try await Task.sleep(for: .milliseconds(50))
        #expect(try readBytes(socket, count: goodbye.count + 10, timeout: .seconds(5)) == goodbye)
        socket.close()
        #expect(await eventually { log.closeCount == 1 })
        #expect(log.read { $0.closes[0] } == nil)
    }

    @Test("writes from other threads arrive in order through loop.execute")
    func writesFromOtherThreads() async throws {
        let group = try EventLoopGroup(threads: 2, name: "xthread")
        defer { group.shutdown() }
        let log = HandlerLog()
        let connections = ConditionLock<[Connection]>([])
        let server = try TCPServer.start(group: group, configuration: .init()) { connection in
            RecordingHandler(log: log) { connection in connections.withLock { $0.append(connection) } }
        }
        defer { server.stop() }
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        defer { socket.close() }
        #expect(await eventually { connections.withLock { $0.count == 1 } })
        let connection = connections.withLock { $0[0] }
        let failures = try await runOnThreads(1) { _ in
            for value in 0..<1000 { connection.write([UInt8(truncatingIfNeeded: value)]) }
        }
        #expect(failures.isEmpty)
        let received = try readBytes(socket, count: 1000, timeout: .seconds(5))
        #expect(received == (0..<1000).map { UInt8(truncatingIfNeeded: $0) })
        connection.close()
        #expect(try socket.read(maxBytes: 1, timeout: .seconds(5)).isEmpty)
        #expect(await eventually { log.closeCount == 1 })
    }

    @Test("backpressure: an unread peer makes writability drop; reading it brings writability back")
    func backpressureHooks() async throws {
        let group = try EventLoopGroup(threads: 1, name: "pressure")
        defer { group.shutdown() }
        let log = HandlerLog()
        let connections = ConditionLock<[Connection]>([])
        let server = try TCPServer.start(
            group: group, configuration: .init(waterMarks: WaterMarks(low: 1024, high: 64 * 1024))
        ) { _ in RecordingHandler(log: log) { connection in connections.withLock { $0.append(connection) } } }
        defer { server.stop() }
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        defer { socket.close() }
        #expect(await eventually { connections.withLock { $0.count == 1 } })
        let connection = connections.withLock { $0[0] }
        let chunk = [UInt8](repeating: 0x5A, count: 256 * 1024)
        var written = 0
        // Keep writing until the kernel buffers are full and the queue passes the high-water mark. A plain loop on
        // this thread, each write followed by a short wait on the log: the connection's loop reports writability
        // from its own thread, and no await gives this task up to the pool (whose two threads the suite's
        // synchronous tests can hold for tens of seconds on two cores).
        while !log.wait(until: .after(.milliseconds(20)), { !$0.writability.isEmpty }) {
            guard written < 256 * 1024 * 1024 else {
                Issue.record("writability did not drop after \(written) bytes written")
                return
            }
            connection.write(chunk)
            written += chunk.count
        }
        #expect(log.read { $0.writability } == [false])
        let queued = try connection.loop.submitAndWait { connection.queuedOutboundBytes }
        #expect(queued > 64 * 1024)
        let received = try readBytes(socket, count: written, timeout: .seconds(20))
        #expect(received.count == written)
        #expect(await eventually { log.read { $0.writability } == [false, true] })
        #expect(try connection.loop.submitAndWait { connection.queuedOutboundBytes } == 0)
    }

    @Test("pauseReading holds input back until resumeReading")
    func pauseAndResume() async throws {
        let group = try EventLoopGroup(threads: 1, name: "pause")
        defer { group.shutdown() }
        let log = HandlerLog()
        let connections = ConditionLock<[Connection]>([])
        let server = try TCPServer.start(group: group, configuration: .init()) { _ in
            RecordingHandler(log: log) { connection in
                connection.pauseReading()
                connections.withLock { $0.append(connection) }
            }
        }
        defer { server.stop() }
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: server.port)
        defer { socket.close() }
        try socket.write([9, 8, 7])
        #expect(await eventually { connections.withLock { $0.count == 1 } })
        // The sleep is the behaviour under test: a quiet period in which paused input may not be delivered.
        try await Task.sleep(for: .milliseconds(100))
        #expect(log.receivedCount == 0)
        let connection = connections.withLock { $0[0] }
        connection.loop.execute { connection.resumeReading() }
        #expect(await eventually { log.receivedCount == 3 })
    }

    @Test("stop closes every connection and the listener; group shutdown closes what is left")
    func stopAndShutdown() async throws {
        let group = try EventLoopGroup(threads: 2, name: "stop")
        let log = HandlerLog()
        let server = try TCPServer.start(group: group, configuration: .init()) { _ in
            RecordingHandler(log: log)
        }
        let port = server.port
        let clients = try (0..<4).map { _ in try ClientSocket.connect(host: "127.0.0.1", port: port) }
        #expect(await eventually { log.read { $0.opened } == 4 })
        server.stop()
        #expect(await eventually { log.closeCount == 4 })
        #expect(server.connectionCount == 0)
        for client in clients {
            #expect(try client.read(maxBytes: 1, timeout: .seconds(5)).isEmpty)
            client.close()
        }
        #expect(throws: SystemError.self) {
            try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(2))
        }

        // A second server on the same group: shutting the group down closes its open connection.
        let second = try TCPServer.start(group: group, configuration: .init()) { _ in
            RecordingHandler(log: log)
        }
        let lingering = try ClientSocket.connect(host: "127.0.0.1", port: second.port)
        #expect(await eventually { log.read { $0.opened } == 5 })
        group.shutdown()
        #expect(log.closeCount == 5)
        #expect(second.connectionCount == 0)
        #expect(try lingering.read(maxBytes: 1, timeout: .seconds(5)).isEmpty)
        lingering.close()
    }

    @Test("IPv6 loopback and localhost listen and connect")
    func addressFamilies() async throws {
        let group = try EventLoopGroup(threads: 1, name: "families")
        defer { group.shutdown() }
        let log = HandlerLog()
        for host in ["::1", "[::1]", "localhost", "127.0.0.1"] {
            let server = try TCPServer.start(group: group, configuration: .init(host: host)) { _ in
                EchoHandler(log: log)
            }
            #expect(server.port > 0)
            if host != "localhost" { #expect(server.localAddress.isIPv6 == host.contains(":")) }
            let socket = try ClientSocket.connect(host: host, port: server.port)
            try socket.write([4, 2])
            #expect(try readBytes(socket, count: 2, timeout: .seconds(5)) == [4, 2])
            #expect(socket.remoteAddress.port == server.port)
            socket.close()
            server.stop()
        }
    }
}
