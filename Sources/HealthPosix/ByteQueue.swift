// The outbound bytes of a connection: one contiguous, growable FIFO of bytes.

/// A FIFO of bytes in one contiguous allocation: append at the back, consume from the front.
/// Dead space at the front is reclaimed when it outgrows the live bytes; a large, drained buffer is freed.
struct ByteQueue: ~Copyable {
    private var storage: UnsafeMutableRawPointer?
    private var capacity = 0
    private var readIndex = 0
    private var writeIndex = 0

    /// Capacity kept after the queue drains; anything larger is released.
    private static let retainedCapacity = 256 * 1024

    init() {}

    deinit { storage?.deallocate() }

    /// Bytes queued.
    var count: Int { writeIndex - readIndex }

    /// Whether nothing is queued.
    var isEmpty: Bool { writeIndex == readIndex }

    /// The queued bytes, valid until the next mutation.
    var readable: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage.map { $0 + readIndex }, count: count)
    }

    /// Appends a copy of `bytes`.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        if capacity - writeIndex < bytes.count { makeRoom(for: bytes.count) }
        (storage! + writeIndex).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        writeIndex += bytes.count
    }

    /// Drops `byteCount` bytes from the front.
    mutating func consume(_ byteCount: Int) {
        precondition(byteCount <= count, "ByteQueue.consume past the end")
        readIndex += byteCount
        if readIndex == writeIndex {
            readIndex = 0
            writeIndex = 0
            if capacity > Self.retainedCapacity { releaseStorage() }
        }
    }

    /// Drops everything and frees the storage.
    mutating func removeAll() {
        releaseStorage()
        readIndex = 0
        writeIndex = 0
    }

    private mutating func releaseStorage() {
        storage?.deallocate()
        storage = nil
        capacity = 0
    }

    private mutating func makeRoom(for byteCount: Int) {
        let live = count
        if readIndex > 0 && readIndex >= live && capacity - live >= byteCount {
            if live > 0 { storage!.copyMemory(from: storage! + readIndex, byteCount: live) }
            readIndex = 0
            writeIndex = live
            return
        }
        let newCapacity = max(live + byteCount, capacity * 2, 4096)
        let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        if live > 0 { grown.copyMemory(from: storage! + readIndex, byteCount: live) }
        storage?.deallocate()
        storage = grown
        capacity = newCapacity
        readIndex = 0
        writeIndex = live
    }
}
