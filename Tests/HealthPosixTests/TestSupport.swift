import Foundation
import HealthPosix
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Whether `condition` holds within `timeout`, looked at through TestSupport's ``waitUntil(timeout:_:file:line:_:)``
/// (the one polling helper), without blocking the test thread; false if it never held.
func eventually(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    (try? await waitUntil(timeout: timeout, "a condition") { condition() }) != nil
}

/// Whether a thread of this process named `name` is asleep in the kernel (state S in /proc): blocked in a read,
/// an epoll_wait or a timed wait. Lets a test wait for a thread to block instead of sleeping and hoping.
func threadIsBlocked(named name: String) -> Bool {
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return false }
    return tasks.contains { task in
        guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
            comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
            let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        // The state is the first field after the parenthesised name.
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("S")
    }
}

/// Runs `body` on `count` fresh threads and waits for all (polling, so the test thread is not blocked).
/// Returns the errors the bodies threw, if any.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) async throws -> [String] {
    let finished = Atomic<Int>(0)
    let failures = ConditionLock<[String]>([])
    var threads: [PosixThread] = []
    for index in 0..<count {
        threads.append(
            try PosixThread.spawn(name: "test-\(index)") {
                do { try body(index) } catch { failures.withLock { $0.append("\(index): \(error)") } }
                finished.add(1, ordering: .releasing)
            })
    }
    let done = await eventually(timeout: .seconds(60)) { finished.load(ordering: .acquiring) == count }
    #expect(done, "threads did not finish")
    for thread in threads { thread.join() }
    return failures.withLock { $0 }
}

/// A thread-safe log of everything a connection handler heard.
final class HandlerLog: Sendable {
    private let state = ConditionLock(State())

    struct State {
        var opened = 0
        var received: [UInt8] = []
        var writability: [Bool] = []
        var closes: [SystemError?] = []
    }

    func update(_ body: (inout State) -> Void) { state.update { body(&$0) } }
    func read<R>(_ body: (State) -> R) -> R { state.withLock { body($0) } }
    /// Blocks the calling thread until `condition` holds or `deadline` passes (keep it short on a pool thread);
    /// whether it held.
    func wait(until deadline: Deadline, _ condition: (State) -> Bool) -> Bool {
        state.wait(until: deadline) { condition($0) ? true : nil } ?? false
    }
    var closeCount: Int { read { $0.closes.count } }
    var receivedCount: Int { read { $0.received.count } }
}

/// Echoes everything back and logs events.
final class EchoHandler: ConnectionHandler {
    let log: HandlerLog
    init(log: HandlerLog) { self.log = log }

    func connectionDidOpen(_ connection: Connection) { log.update { $0.opened += 1 } }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        connection.write(contentsOf: bytes)
    }

    func connection(_ connection: Connection, writabilityChanged isWritable: Bool) {
        log.update { $0.writability.append(isWritable) }
        if isWritable { connection.resumeReading() } else { connection.pauseReading() }
    }

    func connectionDidClose(_ connection: Connection, error: SystemError?) { log.update { $0.closes.append(error) } }
}

/// Logs every byte and event; does not answer.
final class RecordingHandler: ConnectionHandler {
    let log: HandlerLog
    let onOpen: @Sendable (Connection) -> Void
    init(log: HandlerLog, onOpen: @escaping @Sendable (Connection) -> Void = { _ in }) {
        self.log = log
        self.onOpen = onOpen
    }

    func connectionDidOpen(_ connection: Connection) {
        log.update { $0.opened += 1 }
        onOpen(connection)
    }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        log.update { $0.received.append(contentsOf: bytes) }
    }

    func connection(_ connection: Connection, writabilityChanged isWritable: Bool) {
        log.update { $0.writability.append(isWritable) }
    }

    func connectionDidClose(_ connection: Connection, error: SystemError?) { log.update { $0.closes.append(error) } }
}

/// Reads from `socket` until `count` bytes arrived (or end of stream / timeout).
func readBytes(_ socket: ClientSocket, count: Int, timeout: Duration = .seconds(20)) throws -> [UInt8] {
    var result: [UInt8] = []
    result.reserveCapacity(count)
    while result.count < count {
        let chunk = try socket.read(maxBytes: min(256 * 1024, count - result.count), timeout: timeout)
        if chunk.isEmpty { break }
        result += chunk
    }
    return result
}

/// Deterministic pseudo-random bytes.
func patternBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed &* 6_364_136_223_846_793_005 &+ 1
    return (0..<count).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return UInt8(truncatingIfNeeded: state >> 33)
    }
}

/// `count` bytes of a pseudo-random block whose length (4093, a prime) never lines up with buffer sizes, so
/// lost, repeated or reordered chunks show; cheap to build even in debug builds.
func largePattern(_ count: Int) -> [UInt8] {
    let block = patternBytes(4093, seed: 7)
    var result: [UInt8] = []
    result.reserveCapacity(count + block.count)
    while result.count < count { result.append(contentsOf: block) }
    result.removeLast(result.count - count)
    return result
}

/// Byte-wise equality through memcmp (Array's == is slow in debug builds for megabytes).
func sameBytes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    lhs.count == rhs.count
        && lhs.withUnsafeBytes { left in
            rhs.withUnsafeBytes { right in memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0 }
        }
}

/// The calling thread's kernel name.
func currentThreadName() -> String {
    let bytes = (try? FileSystem.readFile("/proc/thread-self/comm", maxBytes: 64)) ?? []
    return String(decoding: bytes.prefix { $0 != 10 }, as: UTF8.self)
}
