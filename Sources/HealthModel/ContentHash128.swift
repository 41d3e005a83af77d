import Foundation

/// FNV-1a with a 128-bit state, fed field by field; the identity of imported samples and batches.
///
/// Written out in HealthModel (shared by the importer and ``Sample/stableID(type:start:end:value:unit:source:)``)
/// because Linux has no CryptoKit. Not a cryptographic hash: it names content, it does not
/// protect it. A value type: copy it to fork a prefix.
package struct ContentHash128 {
    /// High and low halves of the state (offset basis 0x6c62272e07bb014262b821756295c58d).
    package private(set) var high: UInt64 = 0x6c62_272e_07bb_0142
    package private(set) var low: UInt64 = 0x62b8_2175_6295_c58d

    /// FNV-1a step for one byte: xor it in, then multiply by the prime 2^88 + 0x13B (mod 2^128).
    @inline(__always)
    package mutating func add(_ byte: UInt8) {
        low ^= UInt64(byte)
        let (carry, product) = low.multipliedFullWidth(by: 0x13B)
        high = high &* 0x13B &+ carry &+ (low << 24)
        low = product
    }

    /// An empty state.
    package init() {}

    /// A state from its halves.
    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Feeds every byte of `bytes`.
    package mutating func add(_ bytes: UnsafeBufferPointer<UInt8>) {
        for byte in bytes { add(byte) }
    }

    /// Feeds the bytes of `bytes`.
    package mutating func add(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { add($0) }
    }

    /// Feeds the UTF-8 bytes of `text`.
    package mutating func add(_ text: String) {
        for byte in text.utf8 { add(byte) }
    }

    /// Feeds `value` as 8 little-endian bytes.
    @inline(__always)
    package mutating func add(littleEndian value: UInt64) {
        var v = value
        for _ in 0..<8 {
            add(UInt8(truncatingIfNeeded: v))
            v >>= 8
        }
    }

    /// The state as an RFC 9562 version-8 (custom) UUID: the hash with the version and variant bits set.
    package var uuid: UUID {
        let h = high.bigEndian
        let l = low.bigEndian
        return withUnsafeBytes(of: h) { hb in
            withUnsafeBytes(of: l) { lb in
                UUID(
                    uuid: (
                        hb[0], hb[1], hb[2], hb[3], hb[4], hb[5], (hb[6] & 0x0F) | 0x80, hb[7],
                        (lb[0] & 0x3F) | 0x80, lb[1], lb[2], lb[3], lb[4], lb[5], lb[6], lb[7]
                    ))
            }
        }
    }

    /// The state folded to 64 bits.
    package var folded: UInt64 { high ^ low }
}

/// The content identity of a sample (README, "Sample identity"): its source name, type, start, end and value in
/// the type's canonical unit rounded to ``IdentityValue/significantDigits`` digits, as a version-8 UUID. So the
/// same measurement names one sample whatever unit it was written in. The importer names every exported record
/// so, and ``Sample/stableID(type:start:end:value:unit:source:)`` gives agents the same.
package enum SampleContentIdentity {
    /// The UUID of one sample's content; names are UTF-8 bytes; `canonicalValue` is already rounded
    /// (``IdentityValue/canonical(_:unit:type:)``).
    package static func uuid(
        sourceName: [UInt8], typeIdentifier: [UInt8], start: Timestamp, end: Timestamp, canonicalValue: Double
    ) -> UUID {
        hash(
            sourceName: sourceName, typeIdentifier: typeIdentifier, start: start, end: end,
            canonicalValue: canonicalValue
        )
        .uuid
    }

    /// The hash state ``uuid(sourceName:typeIdentifier:start:end:canonicalValue:)`` turns into its UUID: the base
    /// an exported element's identity continues from (the importer's `ElementIdentity`).
    package static func hash(
        sourceName: [UInt8], typeIdentifier: [UInt8], start: Timestamp, end: Timestamp, canonicalValue: Double
    ) -> ContentHash128 {
        hash(
            prefix: prefix(sourceName: sourceName, typeIdentifier: typeIdentifier), start: start, end: end,
            canonicalValue: canonicalValue)
    }
}

extension Sample {
    /// A UUID derived from the sample's content (source name, type, start, end and value), so an agent that
    /// uploads the same measurement again — after a retry, a crash, a re-run over the same file — sends the same
    /// UUID, and the server stores it once (the same UUID with the same content adds nothing).
    ///
    /// Unit-independent: the value is converted to the type's canonical unit and rounded to 9 significant digits
    /// first (``IdentityValue``), so 1 km and 1,000 m name the same sample. It is the importer's identity
    /// (`hkq import`) and `hkq insert`'s. Throws ``ErrorCode/incompatibleUnit`` when `unit` does not measure
    /// `type`. Pure and thread-safe.
    public static func stableID(
        type: QuantityType, start: Timestamp, end: Timestamp, value: Double, unit: HealthUnit, source: SourceInfo
    ) throws -> UUID {
        try SampleRules.validate(unit: unit, for: type)
        guard let canonical = IdentityValue.canonical(value, unit: unit, type: type) else {
            throw HealthError(.invalidSample, "\(type) value \(value) \(unit) is out of range in \(type.canonicalUnit)")
        }
        return SampleContentIdentity.uuid(
            sourceName: Array(source.name.utf8), typeIdentifier: Array(type.identifier.utf8), start: start, end: end,
            canonicalValue: canonical)
    }

    /// This sample's content-derived UUID (``stableID(type:start:end:value:unit:source:)``); subject and
    /// metadata do not take part.
    public func stableID() throws -> UUID {
        try Sample.stableID(type: type, start: start, end: end, value: value, unit: unit, source: source)
    }

    /// This sample with its UUID replaced by ``stableID()``.
    public func withStableID() throws -> Sample {
        var sample = self
        sample.uuid = try stableID()
        return sample
    }
}
