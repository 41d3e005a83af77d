import HealthModel

/// A name the client gives one insert (`hkq insert --idempotency-key`, the HTTP API's `Idempotency-Key` header)
/// so that sending it again is recognised: each batch's id is hashed from the key and the batch's rows, and the
/// server repeats the first acknowledgement of a batch id it applied recently (the last 64 batches the same
/// identity sent for the subject and type; PROTOCOL.md, *insert*). The same rows under the same key repeat the
/// first answer; other rows under the same key are batches of their own, stored as any others.
public struct IdempotencyKey: Hashable, Sendable {
    /// Longest key, in characters.
    public static let maxLength = 255

    /// The key as given.
    public let text: String

    /// `text` as a key; a message saying why not when it is empty, longer than ``maxLength`` or holds a
    /// character outside visible ASCII (`!` to `~`).
    public static func parse(_ text: String) -> Result<IdempotencyKey, KeyError> {
        guard !text.isEmpty, text.utf8.count <= maxLength, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            return .failure(
                KeyError(
                    message: "an idempotency key is 1 to \(maxLength) characters of visible ASCII (! to ~), not "
                        + "\"\(text.prefix(40))\(text.count > 40 ? "…" : "")\""))
        }
        return .success(IdempotencyKey(text: text))
    }

    /// Why a text is not a key.
    public struct KeyError: Error, Sendable {
        public let message: String
    }

    private init(text: String) { self.text = text }

    /// The id of `batch` under this key: FNV-1a (128-bit state, folded) of the key, type, unit, and each row's
    /// UUID (those sent; hkq insert sends every row's), start, end and value.
    public func batchID(of batch: SampleBatch) -> UInt64 {
        var hash = ContentHash128()
        hash.add("hkq insert idempotency key")
        hash.add(0x1F)
        hash.add(text)
        hash.add(0x1F)
        hash.add(batch.typeIdentifier)
        hash.add(0x1F)
        hash.add(batch.unit)
        hash.add(0x1F)
        for row in 0..<batch.count {
            if let uuid = batch.uuids?[row] {
                withUnsafeBytes(of: uuid.uuid) { hash.add($0.bindMemory(to: UInt8.self)) }
            }
            hash.add(littleEndian: UInt64(bitPattern: batch.starts[row]))
            hash.add(littleEndian: UInt64(bitPattern: batch.ends[row]))
            hash.add(littleEndian: batch.values[row].bitPattern)
        }
        // 0 is no batch id a client sends (HealthClient draws from 1 up).
        return max(hash.folded, 1)
    }
}
