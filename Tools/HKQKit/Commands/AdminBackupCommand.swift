import HealthClient
import HealthWire

/// `hkq admin backup DIR`: a consistent online backup, written by the server into DIR on its own host.
public struct AdminBackupCommand: Command {
    /// An admin backup command.
    public init() {}

    /// `backup <directory>`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "backup", abstract: "Take a consistent online backup into a directory on the server's host.",
            discussion: """
                The server snapshots every type, then copies the snapshot, the log after it and the identities into \
                DIRECTORY while writes go on, with backup.json (each file's size and checksum) last. DIRECTORY is \
                an absolute path on the server's host whose parent exists; it must not exist or be empty, be \
                reached through a symbolic link or lie inside the server's data directory. Every change \
                acknowledged before the backup started is in it. Restore with \
                hkd --restore-from DIRECTORY --data-dir NEW (which checks backup.json first).
                """,
            arguments: [ArgumentSpec("directory", help: "Absolute path on the server's host.")])
    }

    /// Takes the backup and prints what it holds.
    public func run(_ context: CommandContext) async throws {
        let directory = context.argument(0)!
        let result = try await ServerSession.run(context) { client in try await client.backup(to: directory) }
        var records = RecordSet(columns: [
            .init("directory", title: "DIRECTORY"), .init("generation", title: "SNAPSHOT"),
            .init("samples", title: "SAMPLES"), .init("files", title: "FILES"), .init("bytes", title: "BYTES"),
        ])
        let row: [JSONValue] = [
            .string(directory), .integer(Int64(result.generation)), .integer(Int64(result.samples)),
            .integer(Int64(result.files)), .integer(Int64(result.bytes)),
        ]
        records.append(row)
        try context.print(records)
    }
}
