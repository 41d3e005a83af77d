import HealthModel

/// Why bytes could not be decoded. Every case maps to a stable protocol ``ErrorCode``.
public struct CodecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable protocol code of the problem.
    public var code: ErrorCode
    /// What went wrong, naming the field and byte offset.
    public var message: String

    /// An error with `code` and a message naming the field and offset.
    public init(_ code: ErrorCode = .malformedPayload, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// The same problem as a ``HealthError``, for replies.
    public var healthError: HealthError { HealthError(code, message) }
}

/// A byte as two lowercase hex digits, for error messages ("unknown flag bits 0x80").
public func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
}
