import Foundation

/// SplitMix64: a small, fast, deterministic generator, so whatever is drawn from it follows from its seed alone.
///
/// The one seeded generator of the package: the client's reconnect jitter when seeded
/// (`ReconnectPolicy.seed`), hkbench's datasets, the tests (through TestSupport) and the fuzz harnesses. Their
/// datasets, seeds and corpora depend on its exact sequence, so the constants must never change. Not for secrets.
/// A value type: a copy carries on with the same sequence.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    @usableFromInline var state: UInt64

    /// A generator whose whole sequence follows from `seed`.
    @inlinable
    public init(seed: UInt64) { state = seed }

    /// The next value of the sequence.
    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SplitMix64 {
    /// A random version 4 UUID made of the next two values (a client's own UUIDs, in tests and benchmarks).
    public mutating func nextUUID() -> UUID {
        var bytes = withUnsafeBytes(of: (next(), next())) { $0.load(as: uuid_t.self) }
        bytes.6 = bytes.6 & 0x0F | 0x40
        bytes.8 = bytes.8 & 0x3F | 0x80
        return UUID(uuid: bytes)
    }
}
