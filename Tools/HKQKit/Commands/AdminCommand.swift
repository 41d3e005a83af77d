import Foundation
import HealthClient
import HealthModel
import HealthWire

/// `hkq admin`: create, list, change and revoke client identities (admin tokens only; SECURITY.md).
public enum AdminCommand {
    /// `admin create|list|update|revoke|backup`.
    public static let group = CommandGroup(
        name: "admin", abstract: "Manage client identities: tokens with subjects and per-type grants.",
        subcommands: [
            AdminCreateCommand(), AdminListCommand(), AdminUpdateCommand(), AdminRevokeCommand(), AdminBackupCommand(),
        ])

    /// The options that describe an identity's rights.
    static let grantOptions: [OptionSpec] = [
        .option("subjects", value: "list", help: "Comma-separated subjects it may touch (default: every subject)."),
        .option(
            "share", value: "types", help: "Comma-separated types it may write (insert, delete its own); * for all."),
        .option(
            "read", value: "types", help: "Comma-separated types whose samples by any writer it may read; * for all."),
        .flag("admin", help: "It may manage identities."),
    ]

    /// The identity `name` with the grants the options describe.
    static func spec(_ context: CommandContext, name: String) throws -> IdentitySpec {
        func list(_ option: String) -> [String] {
            context.arguments.values(option).flatMap { $0.split(separator: ",") }
                .map { $0.trimmingWhitespace }.filter { !$0.isEmpty }
        }
        let share = list("share")
        let read = list("read")
        var grants: [TypeGrant] = []
        for type in share + read where !grants.contains(where: { $0.type == type }) {
            // Quantity and category types, and the types kept apart from them: `workout`, the profile types and the
            // correlation types (`bloodPressure`, `food`) (HEALTHKIT.md §13).
            if type != "*", !WorkoutType.matches(type), ProfileType.named(type) == nil,
                CorrelationType(named: type) == nil
            {
                _ = try QuantityType.named(type)
            }
            grants.append(TypeGrant(type: type, share: share.contains(type), read: read.contains(type)))
        }
        return IdentitySpec(
            name: name, subjects: list("subjects"), grants: grants, isAdmin: context.arguments.flag("admin"))
    }

    /// Identities as records: name, admin, subjects (`*`: all), share and read types, created, revoked. JSON
    /// gives the lists as arrays of strings; tables and CSV join them with commas.
    static func records(_ identities: [IdentityInfo], context: CommandContext) -> RecordSet {
        var records = RecordSet(columns: [
            .init("name", title: "NAME"), .init("admin", title: "ADMIN"), .init("subjects", title: "SUBJECTS"),
            .init("share", title: "SHARE"), .init("read", title: "READ"), .init("created", title: "CREATED"),
            .init("revoked", title: "REVOKED"),
        ])
        let format = context.globals.format
        let times = context.times(in: .current)
        func list(_ items: [String]) -> JSONValue {
            format == .json ? .array(items.map(JSONValue.string)) : .string(items.joined(separator: ","))
        }
        for identity in identities {
            let spec = identity.spec
            records.append([
                .string(spec.name), .bool(spec.isAdmin), list(spec.subjects.isEmpty ? ["*"] : spec.subjects),
                list(spec.grants.filter(\.share).map(\.type)), list(spec.grants.filter(\.read).map(\.type)),
                times.cell(identity.createdAt, format: format), .bool(identity.revoked),
            ])
        }
        return records
    }
}

/// `hkq admin create NAME [--subjects a,b] [--share t,…] [--read t,…] [--admin]`: prints the new token once.
public struct AdminCreateCommand: Command {
    /// An admin create command.
    public init() {}

    /// `create <name>` with the grant options.
    public var spec: CommandSpec {
        CommandSpec(
            name: "create", abstract: "Create an identity and print its token (shown only this once).",
            discussion:
                "Example: hkq admin create watch-sync --subjects anna,ben --share stepCount,heartRate --read stepCount",
            arguments: [ArgumentSpec("name", help: "Letters, digits, '.', '_' or '-'.")],
            options: AdminCommand.grantOptions)
    }

    /// Creates the identity; the token goes to stdout alone (JSON: with the name), a reminder to stderr.
    public func run(_ context: CommandContext) async throws {
        let spec = try AdminCommand.spec(context, name: context.argument(0)!)
        let result = try await ServerSession.run(context) { client in try await client.administer(.create(spec)) }
        if context.globals.format == .json {
            context.print(JSONValue.object([("name", .string(spec.name)), ("token", .string(result.token))]).rendered)
        } else {
            context.print(result.token)
        }
        context.console.printError("created identity \"\(spec.name)\"; store its token now, it is not shown again")
    }
}

/// `hkq admin list`.
public struct AdminListCommand: Command {
    /// An admin list command.
    public init() {}

    /// `list`, no arguments.
    public var spec: CommandSpec {
        CommandSpec(name: "list", abstract: "List identities and their grants (never tokens).", selectsFields: true)
    }

    /// Prints every identity.
    public func run(_ context: CommandContext) async throws {
        let result = try await ServerSession.run(context) { client in try await client.administer(.list) }
        try context.print(AdminCommand.records(result.identities, context: context))
    }
}

/// `hkq admin update NAME …`: replaces the identity's subjects, grants and admin flag.
public struct AdminUpdateCommand: Command {
    /// An admin update command.
    public init() {}

    /// `update <name>` with the grant options.
    public var spec: CommandSpec {
        CommandSpec(
            name: "update", abstract: "Replace an identity's subjects, grants and admin flag (its token stays).",
            discussion: "Options left out are cleared: list every grant the identity keeps.",
            arguments: [ArgumentSpec("name", help: "The identity's name.")], options: AdminCommand.grantOptions)
    }

    /// Updates and prints the identity.
    public func run(_ context: CommandContext) async throws {
        let spec = try AdminCommand.spec(context, name: context.argument(0)!)
        let result = try await ServerSession.run(context) { client in try await client.administer(.update(spec)) }
        try context.print(AdminCommand.records(result.identities, context: context))
    }
}

/// `hkq admin revoke NAME`: its token fails from the next request on, open connections included.
public struct AdminRevokeCommand: Command {
    /// An admin revoke command.
    public init() {}

    /// `revoke <name>`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "revoke", abstract: "Revoke an identity: its token fails from its next request on.",
            arguments: [ArgumentSpec("name", help: "The identity's name.")])
    }

    /// Revokes and prints the identity.
    public func run(_ context: CommandContext) async throws {
        let name = context.argument(0)!
        let result = try await ServerSession.run(context) { client in try await client.administer(.revoke(name: name)) }
        try context.print(AdminCommand.records(result.identities, context: context))
    }
}
