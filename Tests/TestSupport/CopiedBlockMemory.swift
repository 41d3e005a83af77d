import HealthEngine

/// Memory holding a copy of some bytes, as a mapped segment or snapshot file holds cold blocks.
public final class CopiedBlockMemory: BlockMemory, @unchecked Sendable {
    public let bytes: UnsafeRawBufferPointer

    /// A copy of `array`.
    public init(_ array: [UInt8]) {
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: array.count, alignment: 8)
        memory.copyBytes(from: array)
        bytes = UnsafeRawBufferPointer(memory)
    }

    deinit { bytes.deallocate() }
}
