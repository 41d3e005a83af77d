import Foundation
import HealthClient
import HealthModel

/// `hkq insert FILE`: stores the samples of a CSV or JSON-lines file, streaming it in batches.
public struct InsertCommand: Command {
    /// Rows read before a batch is sent; the file is never held in memory whole.
    public static let batchRows = 10_000

    /// An insert command.
    public init() {}

    /// `insert <file>` with `--input-format`.
    public var spec: CommandSpec {
        CommandSpec(
            name: "insert", abstract: "Store the samples of a CSV or JSON-lines file (- reads standard input).",
            discussion: """
                CSV has a header row naming the columns type,start,end,value,unit,source and optionally uuid and \
                bundleIdentifier (any order); JSON lines have one object per line with those keys, and optionally \
                metadata (an object of string or number values). A column or key not listed is an error naming \
                it, unless --ignore-unknown. start and end are ISO 8601 with an \
                offset (2024-03-10T08:00:00-05:00, Z, fractional seconds); an empty end means a point sample; \
                an empty unit means the type's canonical unit. For a category type (sleepAnalysis, \
                appleStandHour, mindfulSession, …) value is the name of a value of its enumeration (asleepCore, \
                HKCategoryValueSleepAnalysisAsleepCore, stood) or its raw value (empty for notApplicable where \
                that is the only value, as for mindfulSession), and unit stays empty; 'hkq types --format csv' \
                lists the values. The format follows the extension (.csv, .jsonl, .json), else the \
                first character ({ means JSON lines).

                Rows are checked and sent in batches of \(InsertCommand.batchRows). A row that is not a valid \
                sample, or that the server refuses, is reported on standard error with its line and reason and \
                the rest are stored; the exit status is then \(ExitStatus.partialImport.rawValue) (0 when every \
                row was stored or already stored, \(ExitStatus.badInput.rawValue) when the file cannot be read \
                on, \(ExitStatus.unavailable.rawValue) when the server is gone). Rows without a uuid get one derived \
                from their content: source, type, start, end and the value in the type's canonical unit rounded \
                to 9 significant digits (stored so), so importing the same file again, or the same values \
                written in other units (1 km, 1000 m), adds nothing. Two identical rows in one file are one \
                sample: the summary says "N identical rows counted once".

                With --idempotency-key each batch's id is hashed from the key and the batch's rows, so the same \
                insert sent again with the same key (a retry after a lost answer) stores nothing and reports the \
                first run's counts; other rows under the same key are stored as usual. The server recognises a \
                batch among the last 64 the same identity stored for the subject and type; past that the rows are \
                still stored once, only counted as already stored. A key is 1 to \(IdempotencyKey.maxLength) \
                characters of visible ASCII (! to ~).
                """,
            arguments: [ArgumentSpec("file", help: "The file to read, or - for standard input.")],
            options: [
                .option(
                    "input-format", value: "format", help: "csv or jsonl (default: from the extension or content).",
                    allowedValues: SampleFileFormat.allCases.map(\.rawValue)),
                .flag(
                    "ignore-unknown", help: "Skip columns or keys the formats do not define instead of refusing them."),
                .option(
                    "idempotency-key", value: "key",
                    help: "Name this insert: sent again with the same key and rows, it repeats the first counts."),
            ])
    }

    /// Reads, validates and sends every row, then prints rows, inserted and already-stored counts per type.
    public func run(_ context: CommandContext) async throws {
        let path = context.argument(0)!
        let format = context.arguments.value("input-format").flatMap(SampleFileFormat.init(rawValue:))
        let key = try context.arguments.value("idempotency-key").map { text in
            try IdempotencyKey.parse(text).mapError { context.usageError($0.message) }.get()
        }
        let tally = try await ServerSession.run(context) { client in
            let reader = try SampleFileReader(
                path: path, format: format, subject: context.globals.subject,
                ignoreUnknown: context.arguments.flag("ignore-unknown"), standardInput: context.program.standardInput)
            var tally = InsertTally(key: key)
            var pending: [Sample] = []
            pending.reserveCapacity(InsertCommand.batchRows)
            // Derived UUIDs name the content: a repeat is an identical row. Sent UUIDs go to the server, which
            // tells a repeat from a conflict.
            var derived = Set<UUID>()
            while let row = try reader.nextRow() {
                let sample: Sample
                switch row {
                case .sample(let read): sample = read
                case .rejected(let error):
                    tally.reject(error)
                    continue
                }
                if reader.derivedUUID, !derived.insert(sample.uuid).inserted {
                    tally.countIdentical(sample)
                    continue
                }
                pending.append(sample)
                if pending.count == InsertCommand.batchRows {
                    try await tally.send(pending, with: client)
                    pending.removeAll(keepingCapacity: true)
                }
            }
            try await tally.send(pending, with: client)
            return tally
        }
        try context.print(tally.records())
        for error in tally.rejected.prefix(InsertTally.maxReported) { context.console.err.write("\(error)\n") }
        if tally.rejected.count > InsertTally.maxReported {
            let more = HumanFormat.count(tally.rejected.count - InsertTally.maxReported, "more row")
            context.console.err.write("… and \(more) rejected\n")
        }
        if context.globals.format == .table {
            let name = path == "-" ? "standard input" : path
            let total = tally.total
            context.print(
                "inserted \(HumanFormat.count(total.inserted, "new sample")) from \(name) "
                    + "(\(HumanFormat.count(total.rows, "row")), \(total.duplicates) already stored"
                    + (total.identical > 0
                        ? ", \(HumanFormat.count(total.identical, "identical row")) counted once" : "")
                    + (tally.rejectedCount > 0 ? ", \(tally.rejectedCount) rejected" : "")
                    + ")")
        }
        if tally.rejectedCount > 0 { throw CommandExit(.partialImport) }
    }
}

/// Counts per type of what an import read and what the server acknowledged.
struct InsertTally: Sendable {
    /// One type's counts.
    struct Counts: Sendable {
        var rows: UInt64 = 0
        var inserted: UInt64 = 0
        var duplicates: UInt64 = 0
        /// Rows identical to an earlier row of the file, not sent.
        var identical: UInt64 = 0
    }

    /// Rejected rows reported one by one, at most; the rest are counted.
    static let maxReported = 20

    /// Names the batches (``IdempotencyKey/batchID(of:)``); `nil`: each batch gets a fresh random id.
    let key: IdempotencyKey?

    private(set) var order: [String] = []
    private(set) var counts: [String: Counts] = [:]
    /// The first ``maxReported`` rejected rows, with their lines and reasons.
    private(set) var rejected: [ImportError] = []
    /// Rows rejected in all.
    private(set) var rejectedCount = 0

    /// Counts a rejected row.
    mutating func reject(_ error: ImportError) {
        rejectedCount += 1
        if rejected.count < Self.maxReported { rejected.append(error) }
    }

    /// Sends `samples` as one batch per type and unit and adds the acknowledgements; a batch the server refuses
    /// for its content is sent again in parts until each refused row stands alone (``RefusalIsolation``).
    mutating func send(_ samples: [Sample], with client: HealthClient) async throws {
        var batches = SampleBatch.grouping(
            samples, maxRows: InsertCommand.batchRows, makeBatchID: HealthClient.makeBatchID)
        if let key {
            for index in batches.indices { batches[index].batchID = key.batchID(of: batches[index]) }
        }
        for batch in batches {
            var refused: [(row: Int, error: HealthClientError)] = []
            let ack = try await RefusalIsolation.send(rowsOf: batch, client: client) { refused.append(($0, $1)) }
            let type = batch.typeIdentifier
            if counts[type] == nil { order.append(type) }
            counts[type, default: Counts()].rows += UInt64(batch.count)
            counts[type, default: Counts()].inserted += UInt64(ack.inserted)
            counts[type, default: Counts()].duplicates += UInt64(ack.duplicates)
            for (row, error) in refused {
                let uuid = batch.uuid(row: row).uuidString
                reject(ImportError(file: nil, line: nil, message: "\(type) sample \(uuid): \(error.message)"))
            }
        }
    }

    /// Counts a row identical to an earlier one of the file.
    mutating func countIdentical(_ sample: Sample) {
        let type = sample.type.identifier
        if counts[type] == nil { order.append(type) }
        counts[type, default: Counts()].rows += 1
        counts[type, default: Counts()].identical += 1
    }

    /// The sums over every type.
    var total: Counts {
        counts.values.reduce(into: Counts()) { total, counts in
            total.rows += counts.rows
            total.inserted += counts.inserted
            total.duplicates += counts.duplicates
            total.identical += counts.identical
        }
    }

    /// One record per type, in first-seen order.
    func records() -> RecordSet {
        var records = RecordSet(columns: [
            .init("type", title: "TYPE"), .init("rows", title: "ROWS"), .init("inserted", title: "INSERTED"),
            .init("alreadyStored", title: "ALREADY STORED"),
        ])
        for type in order {
            let counts = counts[type]!
            records.append([
                .string(type), .integer(Int64(counts.rows)), .integer(Int64(counts.inserted)),
                .integer(Int64(counts.duplicates)),
            ])
        }
        return records
    }
}
