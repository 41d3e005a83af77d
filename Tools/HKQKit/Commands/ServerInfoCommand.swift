import HealthClient
import HealthWire

/// `hkq server-info`: the server's version, uptime, connections, memory (with its sealed blocks' bytes in memory
/// and on disk), subjects and samples per type.
public struct ServerInfoCommand: Command {
    /// A server-info command.
    public init() {}

    /// `server-info`, no arguments.
    public var spec: CommandSpec {
        CommandSpec(
            name: "server-info", abstract: "Show the server's version, uptime, load and stored samples per type.",
            discussion: """
                Tables show uptime and memory for people (3h 02m, 41.5 MiB); JSON gives seconds and bytes, with \
                samplesPerType as an object; CSV is one row with a column per type.
                """)
    }

    /// Asks the server and prints its answer.
    public func run(_ context: CommandContext) async throws {
        let info = try await ServerSession.run(context) { client in try await client.serverInfo() }
        context.console.printBlock(ServerInfoCommand.rendered(info, format: context.globals.format))
    }

    /// The answer in `format`.
    public static func rendered(_ info: ServerInfo, format: OutputFormat) -> String {
        let total = info.samplesPerType.reduce(UInt64(0)) { $0 + $1.samples }
        let table = format == .table
        let uptime: JSONValue =
            table
            ? .string(HumanFormat.duration(micros: Int64(clamping: info.uptimeMicros)))
            : .number(Double(info.uptimeMicros) / 1e6)
        func bytes(_ count: UInt64) -> JSONValue {
            table ? .string(HumanFormat.bytes(count)) : .integer(Int64(clamping: count))
        }
        var fields = RecordSet(
            columns: [
                .init("version", title: "VERSION"), .init("uptime", title: "UPTIME"),
                .init("connections", title: "CONNECTIONS"), .init("memory", title: "MEMORY"),
                .init("blocksInMemory", title: "BLOCKS IN MEMORY"), .init("blocksOnDisk", title: "BLOCKS ON DISK"),
                .init("subjects", title: "SUBJECTS"), .init("samples", title: "SAMPLES"),
            ],
            rows: [
                [
                    .string(info.serverVersion), uptime, .integer(Int64(clamping: info.connections)),
                    bytes(info.residentBytes), bytes(info.blockBytesInMemory), bytes(info.blockBytesOnDisk),
                    .integer(Int64(clamping: info.subjects)), .integer(Int64(clamping: total)),
                ]
            ])
        let perType = info.samplesPerType.map { ($0.type, JSONValue.integer(Int64(clamping: $0.samples))) }
        switch format {
        case .table, .chart:
            var types = RecordSet(columns: [.init("type", title: "TYPE"), .init("samples", title: "SAMPLES")])
            for (type, count) in perType { types.append([.string(type), count]) }
            return fields.renderedFields() + (perType.isEmpty ? "" : "\n" + types.renderedTable())
        case .json:
            guard case .object(var pairs) = fields.jsonObject(row: 0) else { return fields.renderedJSON() }
            pairs.append(("samplesPerType", .object(perType)))
            return JSONValue.object(pairs).rendered + "\n"
        case .csv:
            fields.columns += perType.map { RecordSet.Column($0.0) }
            fields.rows[0] += perType.map(\.1)
            return fields.renderedCSV()
        }
    }
}
