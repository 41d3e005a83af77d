/// `hkq units`: the group of unit subcommands.
public enum UnitsCommand {
    /// `units convert` and `units show`.
    public static let group = CommandGroup(
        name: "units", abstract: "Parse HKUnit strings and convert values between units.",
        subcommands: [UnitsConvertCommand(), UnitsShowCommand()])
}
