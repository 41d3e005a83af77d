import CNats

/// A JetStream key-value bucket: values with revisions, created or updated only against the revision the caller
/// read, which is what leases and the cluster's settings need.
///
/// Thread-safe like ``JetStream`` (nats.c's `kvStore` may be shared between threads), hence `@unchecked Sendable`.
public final class KeyValueBucket: @unchecked Sendable {
    private let store: OpaquePointer
    /// The bucket's name.
    public let name: String
    /// The connection, kept open while the bucket is used.
    private let owner: JetStream

    init(_ store: OpaquePointer, name: String, owner: JetStream) {
        self.store = store
        self.name = name
        self.owner = owner
    }

    /// One value and the revision that wrote it.
    public struct Entry: Sendable, Equatable {
        public var value: [UInt8]
        public var revision: UInt64
    }

    /// The current value of `key`; `nil` when it has none (never written, deleted, or expired).
    public func get(_ key: String) throws(NATSFailure) -> Entry? {
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, store, key)
        defer { kvEntry_Destroy(entry) }
        if status == NATS_NOT_FOUND { return nil }
        try check(status, "cannot read \(name)/\(key)")
        guard let entry else { return nil }
        let count = Int(kvEntry_ValueLen(entry))
        var value = [UInt8](repeating: 0, count: count)
        if count > 0, let base = kvEntry_Value(entry) {
            value.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: base, count: count)) }
        }
        return Entry(value: value, revision: kvEntry_Revision(entry))
    }

    /// Writes `value` to `key` only if the key has no value; returns the new revision, or `nil` when it has one.
    public func create(_ key: String, _ value: [UInt8]) throws(NATSFailure) -> UInt64? {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes { kvStore_Create(&revision, store, key, $0.baseAddress, Int32($0.count)) }
        if status == NATS_OK { return revision }
        let failure = NATSFailure("cannot create \(name)/\(key)", status)
        if failure.isConflict { return nil }
        throw failure
    }

    /// Writes `value` to `key` only if its revision is still `last`; returns the new revision, or `nil` when
    /// another write came between.
    public func update(_ key: String, _ value: [UInt8], last: UInt64) throws(NATSFailure) -> UInt64? {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes {
            kvStore_Update(&revision, store, key, $0.baseAddress, Int32($0.count), last)
        }
        if status == NATS_OK { return revision }
        let failure = NATSFailure("cannot update \(name)/\(key) after revision \(last)", status)
        if failure.isConflict { return nil }
        throw failure
    }

    /// Writes `value` to `key` whatever its revision (for a key only one node writes); returns the new revision.
    @discardableResult
    public func put(_ key: String, _ value: [UInt8]) throws(NATSFailure) -> UInt64 {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes { kvStore_Put(&revision, store, key, $0.baseAddress, Int32($0.count)) }
        try check(status, "cannot write \(name)/\(key)")
        return revision
    }

    /// Every key that has a value now (deleted and expired keys are left out), in no particular order.
    public func keys() throws(NATSFailure) -> [String] {
        var list = kvKeysList()
        let status = kvStore_Keys(&list, store, nil)
        defer { kvKeysList_Destroy(&list) }
        if status == NATS_NOT_FOUND { return [] }
        try check(status, "cannot list the keys of \(name)")
        guard let keys = list.Keys else { return [] }
        return (0..<Int(list.Count)).compactMap { keys[$0].map { String(cString: $0) } }
    }

    /// Deletes `key`'s value (a delete marker; ``create(_:_:)`` succeeds afterwards).
    public func delete(_ key: String) throws(NATSFailure) {
        try check(kvStore_Delete(store, key), "cannot delete \(name)/\(key)")
    }

    deinit { kvStore_Destroy(store) }
}

extension NATSFailure {
    /// A revision-checked write refused because the key moved on (JetStream's wrong-last-sequence error).
    var isConflict: Bool { isWrongLastSequence || text.contains("wrong last sequence") }
}
