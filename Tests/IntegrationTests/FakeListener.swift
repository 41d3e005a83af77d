import Foundation
import HealthCodec
import HealthModel
import HealthWire
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP socket on 127.0.0.1 that pretends to be hkd for one connection and records every byte the
/// client sends: what a fake listener on hkd's port would learn.
///
/// It runs on its own thread (blocking accept and recv must not starve the test pool).
final class FakeListener: Sendable {
    /// How the fake answers the hello.
    enum Behaviour: Sendable {
        /// welcome at once, without a signature (as `--auth off` would).
        case welcomeAtOnce
        /// A challenge with `salt` (e.g. the real identity's, which anyone may learn), then, after the proof,
        /// a welcome with a made-up signature.
        case challenge(salt: [UInt8])
    }

    let port: Int
    private let fd: Int32
    private let received = Mutex<[UInt8]>([])
    private let finished = ConditionBox()

    init(_ behaviour: Behaviour, seed: UInt64 = 42) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        guard fd >= 0 else { throw HealthError(.internalError, "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 4) == 0 else { throw HealthError(.internalError, "bind/listen failed") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in serve(behaviour, seed: seed) }
        thread.start()
    }

    /// Every byte the client sent, once it closed the connection (or after 10 s).
    func bytesReceived() -> [UInt8] {
        finished.wait(seconds: 10)
        return received.withLock { $0 }
    }

    /// The frames in ``bytesReceived()``.
    func framesReceived() throws -> [Frame] {
        var decoder = FrameDecoder()
        decoder.append(bytesReceived())
        var frames: [Frame] = []
        while let frame = try decoder.next() { frames.append(frame) }
        return frames
    }

    private func serve(_ behaviour: Behaviour, seed: UInt64) {
        defer {
            close(fd)
            finished.signal()
        }
        let client = accept(fd, nil, nil)
        guard client >= 0 else { return }
        defer { close(client) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var generator = SplitMix64(seed: seed)
        var decoder = FrameDecoder()
        var answered = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return }
            let chunk = Array(buffer[0..<count])
            received.withLock { $0 += chunk }
            decoder.append(chunk)
            while (try? decoder.next()) != nil {
                answered += 1
                let reply: Message?
                switch (behaviour, answered) {
                case (.welcomeAtOnce, 1):
                    reply = .welcome(
                        Welcome(serverVersion: "fake", connectionID: 1, identity: "admin", limits: Self.limits))
                case (.challenge(let salt), 1):
                    let nonce = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    reply = .challenge(Challenge(serverNonce: nonce, salt: salt))
                case (.challenge, 2):
                    let signature = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    reply = .welcome(
                        Welcome(
                            serverVersion: "fake", connectionID: 1, identity: "admin", limits: Self.limits,
                            serverSignature: signature))
                default:
                    reply = nil
                }
                if let reply {
                    let bytes = FrameEncoder().encode(reply.frame(requestID: 0))
                    _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
            }
        }
    }

    static let limits = SessionLimits(
        maxFrameBytes: 1 << 20, maxInflatedBytes: 1 << 20, maxBatchRows: 1000, maxPipelinedRequests: 8,
        idleTimeoutSeconds: 0)
}

/// A one-shot signal between threads.
final class ConditionBox: Sendable {
    private let condition = Mutex(false)
    private let semaphore = DispatchSemaphore(value: 0)

    func signal() {
        condition.withLock { $0 = true }
        semaphore.signal()
    }

    /// Waits until ``signal()`` was called, at most `seconds`.
    func wait(seconds: Int) {
        if condition.withLock({ $0 }) { return }
        if semaphore.wait(timeout: .now() + .seconds(seconds)) == .success { semaphore.signal() }
    }
}
