import HealthClient
import HealthModel

/// `hkq auth`: what the connecting identity may do.
public enum AuthCommand {
    /// `auth status`.
    public static let group = CommandGroup(
        name: "auth", abstract: "Show what the token hkq uses may do.", subcommands: [AuthStatusCommand()])
}

/// `hkq auth status TYPE…`: HealthKit's sharing status of each type for the token's identity.
public struct AuthStatusCommand: Command {
    /// An auth status command.
    public init() {}

    /// `status <type> ...`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "status", abstract: "Show the sharing (write) authorization of quantity types.",
            discussion: """
                As in HealthKit the answer is about sharing only: sharingAuthorized, sharingDenied or notDetermined.
                Whether the identity may read other writers' samples is never revealed: without read permission
                queries simply return only the samples this identity wrote. The status is for the subject --subject
                names (default: me): an identity limited to other subjects gets sharingDenied.
                """,
            arguments: [ArgumentSpec("type", help: "Quantity types, e.g. stepCount heartRate.", isVariadic: true)],
            selectsFields: true)
    }

    /// Prints TYPE and STATUS per requested type.
    public func run(_ context: CommandContext) async throws {
        let types = context.arguments.positionals
        let statuses = try await ServerSession.run(context) { client in
            try await client.authorizationStatus(types, subject: context.globals.subject)
        }
        var records = RecordSet(columns: [.init("type", title: "TYPE"), .init("status", title: "STATUS")])
        for status in statuses { records.append([.string(status.type), .string("\(status.state)")]) }
        try context.print(records)
    }
}
