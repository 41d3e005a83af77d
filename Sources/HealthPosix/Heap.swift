import CLinux

/// The C allocator's figures, and giving its free pages back to the system.
public enum Heap {
    /// Bytes handed out and not yet freed.
    public static var bytesInUse: UInt64 { hk_heap_in_use() }

    /// Bytes the allocator holds free for later allocations (counted in the process's resident memory while
    /// their pages are touched).
    public static var bytesFree: UInt64 { hk_heap_free() }

    /// Returns the allocator's free pages to the system (`malloc_trim`): after a phase that freed much of what
    /// it allocated, such as restoring the store.
    public static func trim() { _ = hk_heap_trim() }

    /// Serves every allocation of at least `bytes` with a mapping of its own, returned to the system when freed
    /// (`mallopt(M_MMAP_THRESHOLD)`, which also stops glibc raising that threshold after each large free).
    public static func mapAllocations(atLeast bytes: Int) { _ = hk_heap_map_large(bytes) }
}
