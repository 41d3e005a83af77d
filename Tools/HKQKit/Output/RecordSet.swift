/// Rows of named fields, printable as a table, JSON or CSV: the one result shape every command prints.
///
/// Build it with columns (JSON key, table title) and rows of ``JSONValue`` cells, then call
/// ``rendered(as:)`` or ``CommandContext/print(_:)``. JSON is an array with one object per line; CSV has a
/// header of keys; the table shows the columns marked `inTable`, numeric columns right-aligned.
public struct RecordSet: Sendable {
    /// One field of every record.
    public struct Column: Sendable {
        /// The JSON key and CSV header, e.g. `fullIdentifier`.
        public var key: String
        /// The table header, e.g. `FULL IDENTIFIER`; defaults to the key.
        public var title: String
        /// Whether the table shows the column (JSON and CSV always include it).
        public var inTable: Bool
        /// Whether tables round its numbers for reading (``NumberFormat/rounded(_:)``: computed figures such
        /// as pro-rated sums); JSON and CSV keep every digit.
        public var roundedInTable: Bool

        /// A column keyed `key`, titled `title` (default: the key), shown in tables unless `inTable` is false,
        /// its numbers rounded there when `roundedInTable`.
        public init(_ key: String, title: String? = nil, inTable: Bool = true, roundedInTable: Bool = false) {
            self.key = key
            self.title = title ?? key
            self.inTable = inTable
            self.roundedInTable = roundedInTable
        }
    }

    /// The fields, in output order.
    public var columns: [Column]
    /// The records; each has one cell per column.
    public var rows: [[JSONValue]]

    /// A record set with the given columns and rows.
    public init(columns: [Column], rows: [[JSONValue]] = []) {
        self.columns = columns
        self.rows = rows
    }

    /// Adds one record (one cell per column, in column order).
    public mutating func append(_ row: [JSONValue]) { rows.append(row) }

    /// The records in `format`, ending with a newline.
    public func rendered(as format: OutputFormat) -> String {
        switch format {
        case .table, .chart: renderedTable()
        case .json: renderedJSON()
        case .csv: renderedCSV()
        }
    }

    /// Aligned columns; a column whose cells are all numbers (or null) is right-aligned.
    public func renderedTable() -> String {
        let shown = columns.indices.filter { columns[$0].inTable }
        let alignments: [TextTable.Alignment] = shown.map { column in
            let cells = rows.map { $0[column] }
            let numeric = cells.contains(where: \.isNumber) && cells.allSatisfy { $0.isNumber || $0 == .null }
            return numeric ? .right : .left
        }
        let table = TextTable(
            titles: shown.map { columns[$0].title }, alignments: alignments,
            rows: rows.map { row in shown.map { tableText(row[$0], column: $0) } })
        return table.rendered()
    }

    /// A cell as tables show it: ``JSONValue/plainText``, numbers rounded in ``Column/roundedInTable`` columns.
    func tableText(_ cell: JSONValue, column: Int) -> String {
        if columns[column].roundedInTable, case .number(let value) = cell { return NumberFormat.rounded(value) }
        return cell.plainText
    }

    /// Record `row` as a JSON object keyed by column key.
    public func jsonObject(row: Int) -> JSONValue {
        .object(columns.indices.map { (columns[$0].key, rows[row][$0]) })
    }

    /// A JSON array of objects keyed by column key, one object per line.
    public func renderedJSON() -> String {
        if rows.isEmpty { return "[]\n" }
        let objects = rows.indices.map { jsonObject(row: $0).rendered }
        return "[\n" + objects.map { "  " + $0 }.joined(separator: ",\n") + "\n]\n"
    }

    /// Each record as `TITLE  value` lines (every column, titles aligned), records separated by a blank line.
    public func renderedFields() -> String {
        let width = columns.map(\.title.count).max() ?? 0
        return rows.map { row in
            columns.indices.map { column in
                let title = columns[column].title
                let line =
                    title + String(repeating: " ", count: width - title.count) + "  "
                    + tableText(row[column], column: column)
                return String(line.reversed().drop(while: { $0 == " " }).reversed()) + "\n"
            }.joined()
        }.joined(separator: "\n")
    }

    /// A header line of keys, then one line per record.
    public func renderedCSV() -> String {
        var writer = CSVWriter(capacity: 64 * (rows.count + 1))
        writer.line(columns.lazy.map(\.key))
        for row in rows {
            for cell in row { writer.field(cell) }
            writer.endLine()
        }
        return writer.text
    }
}
