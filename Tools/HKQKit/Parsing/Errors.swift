/// A mistake in the command line: unknown command or option, missing or malformed argument. Exit status 64.
///
/// hkq prints `error: <message>`, the usage of ``commandPath`` and a hint to its help.
public struct UsageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// One line naming the problem, e.g. `unknown option '--fromat'`.
    public var message: String
    /// The command the mistake was made in, e.g. `["units", "convert"]`; empty for hkq itself.
    public var commandPath: [String]

    /// A usage error in the command at `commandPath`.
    public init(_ message: String, commandPath: [String] = []) {
        self.message = message
        self.commandPath = commandPath
    }

    /// The message.
    public var description: String { message }
}

/// Thrown by a command to end with a particular exit status after it has printed what it wanted.
public struct CommandExit: Error, Equatable, Sendable {
    /// The process exit status.
    public var status: ExitStatus

    /// Ends the command with `status`.
    public init(_ status: ExitStatus) { self.status = status }
}
