import HealthModel

/// The HKUnit string parser.
enum ModelHarnesses {
    /// The input is a unit string. A unit that parses must have a finite positive scale and a finite offset,
    /// and converting to itself must give the value back.
    static let unit = Harness(
        "unit", "HealthUnit(parsing:); parsed units have finite scales and convert to themselves",
        seeds: {
            [
                "count/min", "mL/(kg*min)", "mmol<180.15588000005408>/L", "degC", "kcal", "m^2", "()", "km·h^-1",
                "dBASPL", "IU", "%", "cm^-3.g", "(count/s)^2",
            ].map { Array($0.utf8) }
        }
    ) { input in
        let text = String(decoding: input.rest(), as: UTF8.self)
        guard let unit = attempt({ try HealthUnit(parsing: text) }) else { return }
        require(unit.scale.isFinite && unit.scale > 0, "unit \"\(text)\" has scale \(unit.scale)")
        require(unit.offset.isFinite, "unit \"\(text)\" has offset \(unit.offset)")
        if let same = attempt({ try unit.convert(1, to: unit) }) {
            require(abs(same - 1) <= 1e-9, "unit \"\(text)\" converts 1 to \(same) of itself")
        } else {
            require(false, "unit \"\(text)\" does not convert to itself")
        }
    }
}
