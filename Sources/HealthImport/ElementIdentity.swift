import Foundation
import HealthModel

/// The identity of one exported element (a `<Record>`, `<Workout>` or `<Correlation>` with everything inside it):
/// the element's whole content, so identical elements name one object and elements that differ in anything name
/// two (docs/HEALTHKIT.md, "Identity of exported objects").
///
/// An element's UUID hashes its *base* (for a record the sample content identity: source name, type, start, end
/// and identity value; for a workout or correlation its source name, type, start and end) followed by a marker
/// and ``extras``: the sum, over every other attribute of the element and every attribute of every element inside
/// it, of a 64-bit hash of the attribute's depth, element name, attribute name and normalized value. A sum, so the
/// order attributes and metadata entries are written in does not matter; normalized, so what a later export of
/// the same object writes differently does not count: instants (`startDate`, `endDate`, `creationDate`, `date`)
/// are hashed as instants whatever offset they are written with, and a `device` by its part without the object
/// address (``DeviceDescription/stablePart(ofRaw:)``). The hashes (``ContentHash128``, ``ByteHash``) are part of
/// the stored identity and never change. Not thread-safe.
struct ElementIdentity {
    /// The sum of the hashes of the attributes fed so far.
    private(set) var extras: UInt64 = 0

    /// An identity with no extras yet.
    init() {}

    /// Feeds every attribute of an element `name` at `depth` (the outermost element is depth 0), each decoded
    /// through `scratch`.
    mutating func add(element name: ByteSpan, depth: Int, _ attributes: [XMLAttribute], scratch: inout [UInt8]) {
        if attributes.isEmpty { add(element: name, depth: depth, attribute: nil, scratch: &scratch) }
        for attribute in attributes { add(element: name, depth: depth, attribute: attribute, scratch: &scratch) }
    }

    /// Feeds one attribute of an element `name` at `depth` (`nil`: the element itself, when it has none).
    mutating func add(element name: ByteSpan, depth: Int, attribute: XMLAttribute?, scratch: inout [UInt8]) {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(UInt8(truncatingIfNeeded: depth))
        scratch.append(contentsOf: name)
        scratch.append(0x1F)
        if let attribute {
            scratch.append(contentsOf: attribute.name)
            scratch.append(0x1F)
            Self.appendNormalized(attribute, to: &scratch)
        }
        let hash = scratch.withUnsafeBufferPointer(ByteHash.hash)
        extras &+= hash
    }

    /// The UUID of the element whose base is `base`: the base continued with `0x1E`, the bytes `element` and the
    /// extras (8 bytes little-endian).
    func uuid(base: ContentHash128) -> UUID {
        var identity = base
        identity.add(0x1E)
        for byte in Self.marker { identity.add(byte) }
        identity.add(littleEndian: extras)
        return identity.uuid
    }

    /// The bytes `element`, which set an element identity apart from a content identity.
    private static let marker: [UInt8] = Array("element".utf8)

    /// Appends `attribute`'s value as its identity reads it: an instant's 8 bytes after a `T` for the date
    /// attributes, a device's stable part, else the value with its references decoded.
    private static func appendNormalized(_ attribute: XMLAttribute, to bytes: inout [UInt8]) {
        let name = attribute.name
        if name.equals("device") {
            bytes.append(contentsOf: DeviceDescription.stablePart(ofRaw: attribute.value))
            return
        }
        if name.equals("startDate") || name.equals("endDate") || name.equals("creationDate") || name.equals("date"),
            !attribute.hasReferences, let instant = ExportDateParser.parse(attribute.value)
        {
            bytes.append(0x54)
            withUnsafeBytes(of: UInt64(bitPattern: instant).littleEndian) { bytes.append(contentsOf: $0) }
            return
        }
        if attribute.hasReferences {
            _ = XMLReferences.decode(attribute.value, into: &bytes)
        } else {
            bytes.append(contentsOf: attribute.value)
        }
    }
}
