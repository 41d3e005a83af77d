import Foundation

/// The element identity `hkq import` names a record by (Protocol/STORAGE.md "Content identity"): the record's
/// content identity as a hash state, with its element's *extras* `e` (a 64-bit sum over its other attributes,
/// computed by the importer) mixed into both halves before the version and variant bits are set.
///
/// The mix is a bijection of `e`, so the server can go both ways: recover `e` from a sent UUID and the row's
/// content (``extras(of:base:)``), and rebuild the UUID from the row and `e` (``uuid(base:extras:)``). A row so
/// named is stored with its 8-byte `e` instead of its 16-byte UUID.
package enum SampleElementIdentity {
    /// The constants mixed with `e` for the high and the low half ("element1", "element2").
    static let highConstant: UInt64 = 0x656C_656D_656E_7431
    static let lowConstant: UInt64 = 0x656C_656D_656E_7432

    /// The UUID of the element whose content identity's state is `base` and whose extras are `extras` (never the
    /// content identity itself, whatever the extras).
    package static func uuid(base: ContentHash128, extras: UInt64) -> UUID {
        ContentHash128(high: base.high ^ mix(extras, highConstant), low: base.low ^ mix(extras, lowConstant)).uuid
    }

    /// The extras `e` for which ``uuid(base:extras:)`` gives `uuid`, or `nil` when `uuid` is no element identity of
    /// the content `base` names. The UUID lost four bits of the high half to its version (bits 12–15 of the
    /// half), so each of their 16 values is tried.
    package static func extras(of uuid: UUID, base: ContentHash128) -> UInt64? {
        let (high, low) = withUnsafeBytes(of: uuid.uuid) { raw in
            (
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            )
        }
        let versionBits: UInt64 = 0xF000
        let mixedHigh = (high ^ base.high) & ~versionBits
        for lost in UInt64(0)..<16 {
            let extras = unmix(mixedHigh | lost << 12, highConstant)
            // The low half keeps all but its two variant bits: a cheap check before the whole UUID.
            let expectedLow = base.low ^ mix(extras, lowConstant)
            guard (expectedLow ^ low) & 0x3FFF_FFFF_FFFF_FFFF == 0 else { continue }
            if Self.uuid(base: base, extras: extras) == uuid { return extras }
        }
        return nil
    }

    /// Two 64-bit values mixed into one: a multiply-xorshift finalizer over `a` xor `b` times an odd constant.
    /// For a fixed `b`, a bijection of `a` (``unmix(_:_:)`` inverts it).
    @inline(__always)
    package static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var h = a ^ (b &* 0x9E37_79B9_7F4A_7C15)
        h ^= h >> 32
        h &*= 0xD6E8_FEB8_6659_FD93
        h ^= h >> 32
        return h
    }

    /// The `a` with `mix(a, b) == mixed`: each step of ``mix(_:_:)`` undone (a 32-bit xorshift is its own
    /// inverse; `0xCFEE444D8B59A89B` is the multiplier's inverse modulo 2^64).
    @inline(__always)
    static func unmix(_ mixed: UInt64, _ b: UInt64) -> UInt64 {
        var h = mixed
        h ^= h >> 32
        h &*= 0xCFEE_444D_8B59_A89B
        h ^= h >> 32
        return h ^ (b &* 0x9E37_79B9_7F4A_7C15)
    }
}

extension SampleContentIdentity {
    /// The hash state after a sample's source name and type (the part of its content identity rows of one source
    /// share): ``hash(prefix:start:end:canonicalValue:)`` continues it.
    package static func prefix(sourceName: some Sequence<UInt8>, typeIdentifier: some Sequence<UInt8>)
        -> ContentHash128
    {
        var identity = ContentHash128()
        for byte in sourceName { identity.add(byte) }
        identity.add(0x1F)
        for byte in typeIdentifier { identity.add(byte) }
        identity.add(0x1F)
        return identity
    }

    /// The content identity's hash state of a sample whose source name and type gave `prefix`.
    @inline(__always)
    package static func hash(prefix: ContentHash128, start: Timestamp, end: Timestamp, canonicalValue: Double)
        -> ContentHash128
    {
        var identity = prefix
        identity.add(littleEndian: UInt64(bitPattern: start))
        identity.add(littleEndian: UInt64(bitPattern: end))
        identity.add(littleEndian: (canonicalValue == 0 ? 0 : canonicalValue).bitPattern)
        return identity
    }
}

extension UUID {
    /// Whether the UUID has the form of a content or element identity: RFC 9562 version 8, variant `10`
    /// (``ContentHash128/uuid``). A UUID of another form never names a row by its content.
    package var isContentIdentityForm: Bool { uuid.6 & 0xF0 == 0x80 && uuid.8 & 0xC0 == 0x80 }
}
