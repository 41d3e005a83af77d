// A buffered, non-blocking TCP connection owned by one event loop.
import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// Receives a connection's events, always on the connection's loop thread. Must not block.
public protocol ConnectionHandler: AnyObject {
    /// The connection is registered and ready; called once, before any read.
    func connectionDidOpen(_ connection: Connection)
    /// Bytes arrived. `bytes` is valid only during the call (copy what you keep). Reads arrive in any
    /// chunking: one chunk may hold part of a message or several messages.
    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer)
    /// The outbound queue rose above the high-water mark (`false`) or fell back to the low-water mark (`true`).
    /// A server typically calls `pauseReading()` on `false` and `resumeReading()` on `true`.
    func connection(_ connection: Connection, writabilityChanged isWritable: Bool)
    /// The connection closed: `error` is nil for an orderly close (either side), else what broke it.
    /// Called exactly once; the connection drops its reference to the handler afterwards.
    func connectionDidClose(_ connection: Connection, error: SystemError?)
}

extension ConnectionHandler {
    /// Does nothing.
    public func connectionDidOpen(_ connection: Connection) {}
    /// Does nothing.
    public func connection(_ connection: Connection, writabilityChanged isWritable: Bool) {}
}

/// Outbound-queue thresholds for backpressure, in bytes (`low` < `high`).
public struct WaterMarks: Sendable, Hashable {
    /// Writability returns once the queue has drained to this size.
    public var low: Int
    /// Writability is lost once the queue exceeds this size.
    public var high: Int

    /// Thresholds `low` < `high`.
    public init(low: Int, high: Int) {
        precondition(low >= 0 && low < high, "WaterMarks need 0 <= low < high")
        self.low = low
        self.high = high
    }

    /// 256 KiB / 1 MiB.
    public static let `default` = WaterMarks(low: 256 * 1024, high: 1024 * 1024)
}

/// A non-blocking TCP connection owned by one event loop: reads go to its handler, writes are queued and
/// flushed as the socket accepts them (short writes and EAGAIN wait for EPOLLOUT).
///
/// Threading: handler callbacks run on `loop`. `write(_: [UInt8])`, `close()` and `closeAfterFlush()` may be
/// called from any thread (off the loop they hop over with `loop.execute`, keeping their order); every other
/// member is for the loop thread only. State is loop-confined, hence `@unchecked Sendable`.
public final class Connection: @unchecked Sendable, CustomStringConvertible {
    /// The loop that owns this connection.
    public let loop: EventLoop
    /// The peer's address.
    public let remoteAddress: SocketAddress
    private let fd: Int32
    private let waterMarks: WaterMarks

    // Loop-confined state.
    private var handler: (any ConnectionHandler)?
    private var registration: RegistrationID?
    private var phase = Phase.idle
    private var outbound = ByteQueue()
    private var readingPaused = false
    private var lingerTimer: ScheduledTask?
    /// The layer between the socket and the handler (TLS), if any.
    private var layer: (any StreamLayer)?
    /// Why the connection closes once the lingering ends (a layer's failure), reported to the handler then.
    private var lingerError: SystemError?
    /// Runs once when the connection closes, before the handler hears of it (server accounting).
    var onClose: (() -> Void)?

    /// Whether the outbound queue is at or below the high-water mark (loop thread).
    public private(set) var isWritable = true
    /// When bytes last arrived (or the connection opened), for idle timeouts (loop thread).
    public private(set) var lastReadTime = Deadline.now()

    private enum Phase {
        /// Not yet registered.
        case idle
        /// Reading and writing.
        case open
        /// No more reads; close once the outbound queue drains.
        case flushing(linger: Duration)
        /// Our side is shut down; discarding input until the peer closes or the linger timer fires.
        case lingering
        /// Closed; the fd is released.
        case closed
    }

    /// Wraps a connected, non-blocking socket; `start` registers it.
    init(fd: Int32, loop: EventLoop, remoteAddress: SocketAddress, waterMarks: WaterMarks) {
        self.fd = fd
        self.loop = loop
        self.remoteAddress = remoteAddress
        self.waterMarks = waterMarks
    }

    deinit {
        // Only a connection that never started still owns its fd here.
        if case .idle = phase { try? Sys.close(fd) }
    }

    /// `Connection(<remote address>)`.
    public var description: String { "Connection(\(remoteAddress))" }

    /// Bytes queued but not yet accepted by the kernel (loop thread).
    public var queuedOutboundBytes: Int { outbound.count }

    /// Whether the connection still accepts writes (loop thread).
    public var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    /// Puts `layer` between the socket and the handler (loop thread, before the connection starts): every byte
    /// read goes through it to the handler, every byte written through it to the socket.
    public func install(_ layer: any StreamLayer) {
        precondition(loop.inEventLoop, "Connection.install off its loop")
        guard case .idle = phase else { preconditionFailure("Connection.install after start") }
        self.layer = layer
    }

    /// Registers with the loop and tells the handler it is open (loop thread). On failure the handler
    /// hears `connectionDidClose` with the error.
    func start(handler: any ConnectionHandler) {
        precondition(loop.inEventLoop, "Connection.start off its loop")
        guard case .idle = phase else { return }
        self.handler = handler
        do {
            registration = try loop.register(
                fd: fd, interest: .readable, onEvent: { events in self.handle(events) },
                onLoopShutdown: { self.close(error: nil) })
        } catch {
            phase = .open
            close(error: error)
            return
        }
        phase = .open
        lastReadTime = .now()
        handler.connectionDidOpen(self)
    }

    // MARK: Writing

    /// Queues `bytes` and flushes what the socket takes now. From any thread; dropped once closing.
    public func write(_ bytes: [UInt8]) {
        if loop.inEventLoop {
            bytes.withUnsafeBytes { write(contentsOf: $0) }
        } else {
            loop.execute { self.write(bytes) }
        }
    }

    /// Queues a copy of `bytes` and flushes what the socket takes now (loop thread). Dropped once closing.
    public func write(contentsOf bytes: UnsafeRawBufferPointer) {
        precondition(loop.inEventLoop, "Connection.write(contentsOf:) off its loop")
        guard case .open = phase, bytes.count > 0 else { return }
        guard let layer else { return enqueue(bytes) }
        var output = StreamLayerOutput()
        layer.send(bytes, into: &output)
        perform(output)
    }

    /// Sends what a layer produced, then fails the connection if the layer says so (loop thread).
    private func perform(_ output: StreamLayerOutput) {
        output.forPeer.withUnsafeBytes { enqueue($0) }
        if let failure = output.failure { fail(afterFlushing: failure) }
    }

    /// Sends socket bytes now, queueing what the kernel refuses.
    private func enqueue(_ bytes: UnsafeRawBufferPointer) {
        guard case .open = phase, bytes.count > 0 else { return }
        var rest = bytes
        if outbound.isEmpty {
            // Nothing queued: hand the bytes straight to the kernel and copy only what it refuses.
            do {
                while !rest.isEmpty {
                    guard case .processed(let sent) = try Sys.send(fd, rest) else { break }
                    rest = UnsafeRawBufferPointer(rebasing: rest[sent...])
                }
            } catch {
                close(error: error)
                return
            }
        }
        guard !rest.isEmpty else { return }
        outbound.append(rest)
        updateInterest()
        if isWritable && outbound.count > waterMarks.high {
            isWritable = false
            handler?.connection(self, writabilityChanged: false)
        }
    }

    /// Sends queued bytes until the queue is empty or the socket would block.
    private func flush() {
        do {
            while !outbound.isEmpty {
                guard case .processed(let sent) = try Sys.send(fd, outbound.readable) else { break }
                outbound.consume(sent)
            }
        } catch {
            close(error: error)
            return
        }
        if !isWritable && outbound.count <= waterMarks.low {
            isWritable = true
            handler?.connection(self, writabilityChanged: true)
        }
        if outbound.isEmpty, case .flushing(let linger) = phase {
            beginLinger(linger)
            return
        }
        updateInterest()
    }

    // MARK: Reading

    /// Stops reading from the socket until `resumeReading()` (loop thread); data waits in the kernel.
    public func pauseReading() {
        precondition(loop.inEventLoop, "Connection.pauseReading off its loop")
        readingPaused = true
        updateInterest()
    }

    /// Resumes reading after `pauseReading()` (loop thread).
    public func resumeReading() {
        precondition(loop.inEventLoop, "Connection.resumeReading off its loop")
        readingPaused = false
        updateInterest()
    }

    /// Whether reading is paused by `pauseReading()` (loop thread).
    public var isReadingPaused: Bool { readingPaused }

    private func handle(_ events: IOEvents) {
        if events.contains(.writable) { flush() }
        let inputEvents: IOEvents = [.readable, .hangup, .error]
        guard !events.isDisjoint(with: inputEvents) else { return }
        switch phase {
        case .open where !readingPaused, .lingering:
            readAvailable()
        case .open, .flushing:
            // Not reading, yet epoll reports errors and full hang-ups regardless: the connection is dead.
            if !events.isDisjoint(with: [.hangup, .error]) { closeWithPendingError() }
        case .idle, .closed:
            return
        }
    }

    /// Reads a few buffers' worth, handing each to the handler (or discarding it while lingering).
    private func readAvailable() {
        let buffer = loop.readBuffer
        for _ in 0..<4 {
            let lingering: Bool
            switch phase {
            case .open where !readingPaused: lingering = false
            case .lingering: lingering = true
            default: return
            }
            let result: IOResult<Int>
            do {
                result = try Sys.receive(fd, buffer)
            } catch {
                close(error: error)
                return
            }
            guard case .processed(let count) = result else { return }
            if count == 0 {
                close(error: lingering ? lingerError : nil)
                return
            }
            if !lingering {
                lastReadTime = .now()
                deliver(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            }
            if count < buffer.count { return }
        }
    }

    /// Hands bytes read from the socket to the handler, through the layer if there is one.
    private func deliver(_ bytes: UnsafeRawBufferPointer) {
        guard let layer else {
            handler?.connection(self, didRead: bytes)
            return
        }
        var output = StreamLayerOutput()
        layer.received(bytes, into: &output)
        output.forPeer.withUnsafeBytes { enqueue($0) }
        if !output.forHandler.isEmpty, case .open = phase {
            output.forHandler.withUnsafeBytes { handler?.connection(self, didRead: $0) }
        }
        if let failure = output.failure { fail(afterFlushing: failure) }
    }

    // MARK: Closing

    /// Sends what is queued, then closes, reporting `reason` to the handler as the error (a layer's failure).
    private func fail(afterFlushing reason: String) {
        guard case .open = phase else { return }
        lingerError = SystemError(code: EPROTO, call: "tls", message: reason)
        phase = .flushing(linger: .seconds(1))
        if outbound.isEmpty { beginLinger(.seconds(1)) } else { updateInterest() }
    }

    /// Closes now, discarding queued output; the handler hears `connectionDidClose(error: nil)`. Idempotent;
    /// from any thread.
    public func close() {
        if loop.inEventLoop { close(error: nil) } else { loop.execute { self.close(error: nil) } }
    }

    /// Stops reading, sends what is queued, shuts down our side, then closes when the peer closes or after
    /// `linger` (so a final error message is not lost to a reset). From any thread; idempotent.
    public func closeAfterFlush(linger: Duration = .seconds(2)) {
        guard loop.inEventLoop else {
            loop.execute { self.closeAfterFlush(linger: linger) }
            return
        }
        guard case .open = phase else { return }
        if let layer {
            var output = StreamLayerOutput()
            layer.finish(into: &output)
            output.forPeer.withUnsafeBytes { enqueue($0) }
            guard case .open = phase else { return }
        }
        phase = .flushing(linger: linger)
        if outbound.isEmpty { beginLinger(linger) } else { updateInterest() }
    }

    private func beginLinger(_ linger: Duration) {
        do {
            try Sys.shutdown(fd, how: Sys.shutWrite)
        } catch {
            close(error: error)
            return
        }
        phase = .lingering
        updateInterest()
        lingerTimer = loop.schedule(after: linger) { [self] in self.close(error: self.lingerError) }
    }

    private func closeWithPendingError() {
        let pending = (try? Sys.socketError(fd)) ?? 0
        close(error: pending == 0 ? nil : SystemError(errno: pending, call: "recv"))
    }

    /// Releases everything and tells the handler, once.
    private func close(error: SystemError?) {
        switch phase {
        case .closed: return
        case .idle:
            phase = .closed
            try? Sys.close(fd)
        default:
            phase = .closed
            if let registration { try? loop.deregister(registration) }
            registration = nil
            try? Sys.close(fd)
        }
        lingerTimer?.cancel()
        lingerTimer = nil
        outbound.removeAll()
        layer = nil
        let handler = self.handler
        self.handler = nil
        let onClose = self.onClose
        self.onClose = nil
        onClose?()
        handler?.connectionDidClose(self, error: error)
    }

    /// Asks epoll for exactly what the current phase can act on.
    private func updateInterest() {
        guard let registration else { return }
        var interest: Interest = []
        switch phase {
        case .open:
            if !readingPaused { interest.insert(.readable) }
            if !outbound.isEmpty { interest.insert(.writable) }
        case .flushing:
            interest.insert(.writable)
        case .lingering:
            interest.insert(.readable)
        case .idle, .closed:
            return
        }
        do {
            try loop.modify(registration, interest: interest)
        } catch {
            close(error: error)
        }
    }
}
