import Foundation
import HealthClient
import HealthWire

/// `hkq server-info`: the server's version, uptime, connections, memory (with its sealed blocks' bytes in memory
/// and on disk, and its store's memory by structure), subjects and samples per type.
public struct ServerInfoCommand: Command {
    /// A server-info command.
    public init() {}

    /// `server-info`, no arguments.
    public var spec: CommandSpec {
        CommandSpec(
            name: "server-info", abstract: "Show the server's version, uptime, load and stored samples per type.",
            discussion: """
                Tables show uptime and memory for people (3h 02m, 41.5 MiB); JSON gives seconds and bytes, with \
                samplesPerType as an object; CSV is one row with a column per type. For administrators, JSON \
                and CSV add the store's memory by structure (sealed blocks, kept UUIDs and their index, \
                metadata …); --memory prints it in a table too, with each part's bytes per stored sample.
                """,
            options: [
                .flag("memory", help: "Add the store's memory by structure to the table: where a sample's bytes go.")
            ])
    }

    /// Asks the server and prints its answer.
    public func run(_ context: CommandContext) async throws {
        let info = try await ServerSession.run(context) { client in try await client.serverInfo() }
        context.console.printBlock(
            ServerInfoCommand.rendered(
                info, format: context.globals.format, memoryTable: context.arguments.flag("memory")))
    }

    /// The answer in `format`; a table shows the store's memory by structure only with `memoryTable`.
    public static func rendered(_ info: ServerInfo, format: OutputFormat, memoryTable: Bool = false) -> String {
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
        let memory = info.memoryParts.map { ($0.name, JSONValue.integer(Int64(clamping: $0.bytes))) }
        switch format {
        case .table, .chart:
            var types = RecordSet(columns: [.init("type", title: "TYPE"), .init("samples", title: "SAMPLES")])
            for (type, count) in perType { types.append([.string(type), count]) }
            return fields.renderedFields() + (perType.isEmpty ? "" : "\n" + types.renderedTable())
                + (memory.isEmpty || !memoryTable
                    ? "" : "\n" + memoryParts(info.memoryParts, samples: total).renderedTable())
        case .json:
            guard case .object(var pairs) = fields.jsonObject(row: 0) else { return fields.renderedJSON() }
            pairs.append(("samplesPerType", .object(perType)))
            if !memory.isEmpty { pairs.append(("storeMemory", .object(memory))) }
            return JSONValue.object(pairs).rendered + "\n"
        case .csv:
            fields.columns += perType.map { RecordSet.Column($0.0) } + memory.map { RecordSet.Column("memory.\($0.0)") }
            fields.rows[0] += perType.map(\.1) + memory.map(\.1)
            return fields.renderedCSV()
        }
    }

    /// The store's memory by structure, with each part's bytes per stored sample.
    static func memoryParts(_ parts: [ServerInfo.MemoryPart], samples: UInt64) -> RecordSet {
        var table = RecordSet(columns: [
            .init("part", title: "STORE MEMORY"), .init("bytes", title: "BYTES"),
            .init("perSample", title: "PER SAMPLE"),
        ])
        for part in parts {
            let perSample = samples == 0 ? "" : String(format: "%.2f B", Double(part.bytes) / Double(samples))
            table.append([.string(part.name), .string(HumanFormat.bytes(part.bytes)), .string(perSample)])
        }
        return table
    }
}
