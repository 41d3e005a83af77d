import Foundation
import HealthModel
import Synchronization

/// Reads another ``ExportByteSource`` on a thread of its own, a few pieces ahead of the parser: inflating a zip
/// entry and checking its CRC is a third of the parse thread's work, and this way it runs on another core.
///
/// At most ``depth`` pieces of about ``pieceSize`` bytes wait (memory stays flat); the pieces, the end and an
/// error arrive in the order the wrapped source gave them, each with the file bytes consumed by then. Freeing the
/// source stops the thread at its next piece. Not thread-safe (one reader, like every source).
final class ReadAheadByteSource: ExportByteSource {
    /// Pieces waiting at most.
    static let depth = 4
    /// Bytes gathered from the wrapped source into one piece, at least (the last piece may be shorter).
    static let pieceSize = 256 << 10

    private enum Item: Sendable {
        case bytes([UInt8], bytesRead: Int64)
        case end(bytesRead: Int64)
        case failure(HealthError)
    }

    /// What the two threads share.
    private final class Channel: Sendable {
        let items = Mutex<[Item]>([])
        /// Items waiting.
        let filled = DispatchSemaphore(value: 0)
        /// Free places. Created at 0 and raised: libdispatch traps when a semaphore is freed below its initial
        /// value, which a stopped reader's would be.
        let free = DispatchSemaphore(value: 0)
        let stopped = Atomic<Bool>(false)

        init() { for _ in 0..<ReadAheadByteSource.depth { free.signal() } }

        func put(_ item: Item) {
            items.withLock { $0.append(item) }
            filled.signal()
        }
    }

    /// The wrapped source, handed to the read-ahead thread, which alone uses it from then on.
    private final class Handoff: @unchecked Sendable {
        let source: ExportByteSource
        init(_ source: ExportByteSource) { self.source = source }
    }

    private let channel = Channel()
    private var finished = false
    private(set) var bytesRead: Int64 = 0
    let totalBytes: Int64

    /// Starts reading `source` ahead on a new thread.
    init(_ source: ExportByteSource) {
        totalBytes = source.totalBytes
        let channel = channel
        let handoff = Handoff(source)
        let thread = Thread {
            // Named from inside: Foundation names only the current thread on Linux.
            Thread.current.name = "hk-import-inflate"
            ReadAheadByteSource.produce(handoff.source, into: channel)
        }
        thread.start()
    }

    deinit {
        channel.stopped.store(true, ordering: .releasing)
        channel.free.signal()
    }

    func read(into output: inout [UInt8]) throws -> Bool {
        guard !finished else { return false }
        channel.filled.wait()
        let item = channel.items.withLock { $0.removeFirst() }
        channel.free.signal()
        switch item {
        case .bytes(let bytes, let consumed):
            output.append(contentsOf: bytes)
            bytesRead = consumed
            return true
        case .end(let consumed):
            bytesRead = consumed
            finished = true
            return false
        case .failure(let error):
            finished = true
            throw error
        }
    }

    /// The read-ahead thread: pieces until the source ends or fails, or the reader is freed.
    private static func produce(_ source: ExportByteSource, into channel: Channel) {
        while true {
            channel.free.wait()
            if channel.stopped.load(ordering: .acquiring) { return }
            var piece: [UInt8] = []
            piece.reserveCapacity(pieceSize + (64 << 10))
            do {
                while piece.count < pieceSize, try source.read(into: &piece) {}
                if piece.isEmpty {
                    channel.put(.end(bytesRead: source.bytesRead))
                    return
                }
                channel.put(.bytes(piece, bytesRead: source.bytesRead))
            } catch {
                // The bytes before the damage still count, as they would unread ahead.
                if !piece.isEmpty { channel.put(.bytes(piece, bytesRead: source.bytesRead)) }
                channel.put(.failure(error as? HealthError ?? HealthError(.internalError, "\(error)")))
                return
            }
        }
    }
}
