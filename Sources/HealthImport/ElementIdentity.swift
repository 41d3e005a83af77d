import Foundation
import HealthModel

/// The identity of one exported element (a `<Record>`, `<Workout>` or `<Correlation>` with everything inside it):
/// the element's whole content, so identical elements name one object and elements that differ in anything name
/// two (docs/HEALTHKIT.md §11, Protocol/STORAGE.md "Content identity").
///
/// An element's UUID is its *base* hash (for a record the sample content identity: source name, type, start, end
/// and identity value; for a workout or correlation its source name, type, start and end) with ``extras`` mixed
/// into both halves: the sum, over every other attribute of the element and every attribute of every element
/// inside it, of a term made of the attribute's place (its depth, element and name) and its normalized value. A
/// sum, so the order attributes and metadata entries are written in does not matter; normalized, so what a later
/// export of the same object writes differently does not count: instants (`startDate`, `endDate`,
/// `creationDate`, `date`) are hashed as instants whatever offset they are written with, and a `device` by its
/// part without the object address (``DeviceDescription/stablePart(ofRaw:)``). The hashes (``ContentHash128``,
/// ``ByteHash``) and the mix are part of the stored identity and never change. Not thread-safe.
struct ElementIdentity {
    /// The sum of the terms of the attributes fed so far.
    private(set) var extras: UInt64 = 0

    /// An identity with no extras yet.
    init() {}

    /// Feeds every attribute of an element `name` at `depth` (the outermost element is depth 0), decoding
    /// references through `scratch`.
    mutating func add(element name: ByteSpan, depth: Int, _ attributes: [XMLAttribute], scratch: inout [UInt8]) {
        if attributes.isEmpty { extras &+= Self.place(depth: depth, element: name, attribute: nil, scratch: &scratch) }
        for attribute in attributes {
            let place = Self.place(depth: depth, element: name, attribute: attribute.name, scratch: &scratch)
            add(attribute, at: place, scratch: &scratch)
        }
    }

    /// Feeds `attribute` at `place` (``place(depth:element:attribute:scratch:)``, which callers may compute once
    /// for an attribute every element has).
    mutating func add(_ attribute: XMLAttribute, at place: UInt64, scratch: inout [UInt8]) {
        extras &+= SampleElementIdentity.mix(place, Self.valueHash(attribute, scratch: &scratch))
    }

    /// The UUID of the element whose base is `base`: both halves of the base hash mixed with the extras (never the
    /// base's own UUID, the content identity, whatever the extras).
    func uuid(base: ContentHash128) -> UUID { SampleElementIdentity.uuid(base: base, extras: extras) }

    /// The hash of an attribute's place: its depth (one byte), its element's name, `0x1F` and its name (`nil`: the
    /// element itself, when it has no attributes).
    static func place(depth: Int, element: ByteSpan, attribute: ByteSpan?, scratch: inout [UInt8]) -> UInt64 {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(UInt8(truncatingIfNeeded: depth))
        scratch.append(contentsOf: element)
        scratch.append(0x1F)
        if let attribute { scratch.append(contentsOf: attribute) }
        return scratch.withUnsafeBufferPointer(ByteHash.hash)
    }

    /// The hash of `attribute`'s value as the identity reads it: an instant's 8 bytes (little-endian, the hash
    /// then xor `T`) for the date attributes, a device's stable part, else the value with its references decoded.
    private static func valueHash(_ attribute: XMLAttribute, scratch: inout [UInt8]) -> UInt64 {
        let name = attribute.name
        if name.equals("device") { return ByteHash.hash(DeviceDescription.stablePart(ofRaw: attribute.value)) }
        if name.equals("startDate") || name.equals("endDate") || name.equals("creationDate") || name.equals("date"),
            !attribute.hasReferences, let instant = ExportDateParser.parse(attribute.value)
        {
            let bytes = UInt64(bitPattern: instant).littleEndian
            return withUnsafeBytes(of: bytes) { ByteHash.hash($0.bindMemory(to: UInt8.self)) } ^ 0x54
        }
        guard attribute.hasReferences else { return ByteHash.hash(attribute.value) }
        scratch.removeAll(keepingCapacity: true)
        _ = XMLReferences.decode(attribute.value, into: &scratch)
        return scratch.withUnsafeBufferPointer(ByteHash.hash)
    }
}
