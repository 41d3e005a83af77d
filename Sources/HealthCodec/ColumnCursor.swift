import Foundation
import HealthModel

/// Reads an encoded batch from borrowed memory without bounds-checked array access: the decoder's hot loops.
///
/// Valid only inside the `withUnsafeBufferPointer` call that produced `base`. Every read checks `end` first and
/// throws ``CodecError``.
struct ColumnCursor {
    let base: UnsafePointer<UInt8>
    var offset: Int
    let end: Int

    var remaining: Int { end - offset }

    /// What `read` makes of `bytes`, read through a cursor from their first byte; no bytes at all are a truncated
    /// `what` at byte 0.
    static func reading<T>(
        _ bytes: ArraySlice<UInt8>, _ what: String, _ read: (inout ColumnCursor) throws(CodecError) -> T
    ) throws(CodecError) -> T {
        let array = Array(bytes)
        let result: Result<T, CodecError> = array.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else {
                return .failure(CodecError(.malformedPayload, "truncated \(what) at byte 0"))
            }
            var cursor = ColumnCursor(base: base, offset: 0, end: buffer.count)
            return Result { () throws(CodecError) in try read(&cursor) }
        }
        return try result.get()
    }

    private func truncated(_ what: String) -> CodecError {
        CodecError(.malformedPayload, "truncated \(what) at byte \(offset)")
    }

    @inline(__always)
    mutating func varint() throws(CodecError) -> UInt64 {
        try Varint.decode(base, &offset, end)
    }

    @inline(__always)
    mutating func signedVarint() throws(CodecError) -> Int64 {
        ByteReader.unzigzag(try Varint.decode(base, &offset, end))
    }

    mutating func byte(_ what: String) throws(CodecError) -> UInt8 {
        guard offset < end else { throw truncated(what) }
        defer { offset += 1 }
        return base[offset]
    }

    mutating func uint64(_ what: String) throws(CodecError) -> UInt64 {
        guard remaining >= 8 else { throw truncated(what) }
        defer { offset += 8 }
        return UInt64(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self))
    }

    mutating func double(_ what: String) throws(CodecError) -> Double {
        Double(bitPattern: try uint64(what))
    }

    /// Reads a count for `what`, checking it against `limit` and against the bytes left, given that each item
    /// takes at least `minimumBytes`: a count the payload cannot hold fails before anything is allocated.
    mutating func count(_ what: String, limit: Int, minimumBytes: Int) throws(CodecError) -> Int {
        let at = offset
        let value = try varint()
        let fitting = minimumBytes == 0 ? UInt64.max : UInt64(remaining / minimumBytes)
        guard value <= fitting else {
            let needed = value.multipliedReportingOverflow(by: UInt64(minimumBytes)).partialValue
            throw CodecError(
                .malformedPayload,
                "\(what) \(value) at byte \(at) needs at least \(needed) bytes but only \(remaining) remain")
        }
        guard value <= UInt64(limit) else {
            throw CodecError(.batchTooLarge, "\(what) \(value) at byte \(at) exceeds the limit of \(limit)")
        }
        return Int(value)
    }

    /// Reads a varint length and that many bytes of valid UTF-8, at most `limit` bytes long.
    mutating func string(_ what: String, limit: Int) throws(CodecError) -> String {
        let at = offset
        let length = try count("\(what) length", limit: limit, minimumBytes: 1)
        let bytes = UnsafeBufferPointer(start: base + offset, count: length)
        guard let value = String(validating: bytes, as: UTF8.self) else {
            throw CodecError(.malformedPayload, "\(what) at byte \(at) is not valid UTF-8")
        }
        offset += length
        return value
    }

    /// Reads 16 bytes as a UUID in RFC 4122 byte order.
    @inline(__always)
    mutating func uuid() throws(CodecError) -> UUID {
        guard remaining >= 16 else { throw truncated("UUID") }
        defer { offset += 16 }
        return UUID(uuid: UnsafeRawPointer(base + offset).loadUnaligned(as: uuid_t.self))
    }
}
