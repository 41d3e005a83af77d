/// `hkq version`: the version of hkq, as `hkq --version` prints it.
public struct VersionCommand: Command {
    /// The abstract shown in command lists.
    public static let abstract = "Show the version of hkq (as hkq --version)."

    /// A version command.
    public init() {}

    /// `version`, no arguments.
    public var spec: CommandSpec { CommandSpec(name: "version", abstract: VersionCommand.abstract) }

    /// Prints `hkq VERSION`.
    public func run(_ context: CommandContext) async throws {
        context.console.out.write(context.program.versionLine)
    }
}
