import HealthModel

/// A JSON value with object keys kept in the order they were given, so output is stable and readable.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// Rendered in its shortest round-tripping form; non-finite numbers render as `null`.
    case number(Double)
    /// Exact integers such as timestamps in microseconds.
    case integer(Int64)
    case string(String)
    case array([JSONValue])
    /// Key–value pairs in order; keys should be distinct.
    case object([(String, JSONValue)])

    /// Compact JSON text (no spaces, no newlines), as ``JSONWriter`` writes it.
    public var rendered: String {
        var writer = JSONWriter()
        writer.value(self)
        return writer.text
    }

    /// The value as a table or CSV cell: strings unquoted, numbers in ``NumberFormat/display(_:)`` form, null
    /// empty, containers as JSON.
    public var plainText: String {
        switch self {
        case .null: ""
        case .bool(let value): value ? "true" : "false"
        case .number(let value): NumberFormat.display(value)
        case .integer(let value): String(value)
        case .string(let value): value
        case .array, .object: rendered
        }
    }

    /// Whether the value is a number (tables right-align numeric columns).
    public var isNumber: Bool {
        switch self {
        case .number, .integer: true
        default: false
        }
    }

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.rendered == rhs.rendered }
    public func hash(into hasher: inout Hasher) { hasher.combine(rendered) }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A number value.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// An exact integer value.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
}
