import HealthModel

/// One comparison of a sample's value with a quantity, as `--min`, `--max` and `--where` state it
/// (`value > 100 count/min`); several narrow one ``ValueBounds``.
struct ValueComparison: Equatable {
    /// How the value compares with ``value``.
    enum Relation: Equatable {
        case greater, atLeast, less, atMost, equal
    }

    var relation: Relation
    var value: Double
    /// The unit as written; empty when none was.
    var unit: String

    /// The operators `--where` takes, longest first so `>=` is not read as `>`.
    static let operators: [(symbol: String, relation: Relation)] = [
        (">=", .atLeast), ("<=", .atMost), ("==", .equal), (">", .greater), ("<", .less), ("=", .equal),
    ]

    init(relation: Relation, value: Double, unit: String) {
        self.relation = relation
        self.value = value
        self.unit = unit
    }

    /// Reads `value OP NUMBER [UNIT]` (the word `value` may be left out); `nil` when it is not of that form.
    init?(parsing text: String) {
        var rest = Substring(text.trimmingWhitespace)
        if rest.lowercased().hasPrefix("value") { rest = rest.dropFirst(5).drop { $0 == " " } }
        guard let (symbol, relation) = Self.operators.first(where: { rest.hasPrefix($0.symbol) }),
            let quantity = Self.quantity(String(rest.dropFirst(symbol.count)))
        else { return nil }
        self.init(relation: relation, value: quantity.value, unit: quantity.unit)
    }

    /// A finite number, then optionally a unit (`100`, `100 count/min`, `1.5km`).
    static func quantity(_ text: String) -> (value: Double, unit: String)? {
        let trimmed = text.trimmingWhitespace
        let number = trimmed.prefix { $0.isNumber || "+-.eE".contains($0) }
        guard let value = Double(number), value.isFinite else { return nil }
        return (value, trimmed.dropFirst(number.count).trimmingWhitespace)
    }

    /// `bounds` with this comparison also required: the tighter bound wins, and at an equal bound the strict one.
    func narrowing(_ bounds: ValueBounds) -> ValueBounds {
        var bounds = bounds
        func lower(_ inclusive: Bool) {
            if let current = bounds.lower, current > value || (current == value && !bounds.lowerInclusive) { return }
            bounds.lower = value
            bounds.lowerInclusive = inclusive
        }
        func upper(_ inclusive: Bool) {
            if let current = bounds.upper, current < value || (current == value && !bounds.upperInclusive) { return }
            bounds.upper = value
            bounds.upperInclusive = inclusive
        }
        switch relation {
        case .greater: lower(false)
        case .atLeast: lower(true)
        case .less: upper(false)
        case .atMost: upper(true)
        case .equal:
            lower(true)
            upper(true)
        }
        return bounds
    }
}
