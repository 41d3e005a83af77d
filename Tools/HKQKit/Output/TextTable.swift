/// Renders rows of text as aligned columns separated by two spaces, with a header row.
///
/// Right-aligned columns pad on the left; the last left-aligned column carries no trailing spaces.
public struct TextTable: Sendable {
    /// How a column's cells sit within its width.
    public enum Alignment: Sendable {
        case left
        case right
    }

    /// The header cells.
    public var titles: [String]
    /// One alignment per column.
    public var alignments: [Alignment]
    /// The body; every row has one cell per column.
    public var rows: [[String]]

    /// A table with the given header, alignments (left by default) and rows.
    public init(titles: [String], alignments: [Alignment]? = nil, rows: [[String]] = []) {
        self.titles = titles
        self.alignments = alignments ?? Array(repeating: .left, count: titles.count)
        self.rows = rows
    }

    /// The table as lines joined by newlines, with a final newline.
    public func rendered() -> String {
        let all = [titles] + rows
        var widths = Array(repeating: 0, count: titles.count)
        for row in all {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], cell.count)
            }
        }
        var text = ""
        for row in all {
            var line = ""
            for column in 0..<titles.count {
                let cell = column < row.count ? row[column] : ""
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                if column > 0 { line += "  " }
                line += alignments[column] == .right ? padding + cell : cell + padding
            }
            while line.hasSuffix(" ") { line.removeLast() }
            text += line + "\n"
        }
        return text
    }
}
