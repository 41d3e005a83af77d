import HealthModel

/// The rows of a series that match a filter, as ascending, disjoint runs of row indices (so in start order).
///
/// Reductions consume runs, so a query whose predicate is a plain time range reduces one or two contiguous slices.
struct Selection: Sendable {
    private(set) var runs: [Range<Int>] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Adds one row; rows must come in ascending order.
    mutating func add(_ row: Int) {
        if let last = runs.last, last.upperBound == row {
            runs[runs.count - 1] = last.lowerBound..<(row + 1)
        } else {
            runs.append(row..<(row + 1))
        }
        count += 1
    }

    /// Adds a run of rows, all after the rows added so far.
    mutating func add(_ rows: Range<Int>) {
        guard !rows.isEmpty else { return }
        if let last = runs.last, last.upperBound == rows.lowerBound {
            runs[runs.count - 1] = last.lowerBound..<rows.upperBound
        } else {
            runs.append(rows)
        }
        count += rows.count
    }

    /// Every selected row, ascending.
    var rows: FlattenSequence<[Range<Int>]> { runs.joined() }
}

extension Series {
    /// The rows matching `filter` (date predicate as in HEALTHKIT.md §4, sources by name or bundle id, UUIDs,
    /// values within the value bounds, metadata predicates, the writer identity).
    ///
    /// The value bounds are compared with the stored canonical values: the store's entry points pass filters
    /// through ``SampleFilter/validated(for:)``, which converts them.
    ///
    /// Binary search bounds the scan: with an end bound E only starts before E can match; with a start bound S
    /// and no strict start, a match may start up to ``maxDuration`` before S. Rows that must match are added as
    /// one run without a per-row test; only the edges are tested row by row.
    func select(_ filter: SampleFilter) -> Selection {
        let date = filter.date
        var low = 0
        var high = count
        var sureLow = 0
        var sureHigh = count
        if let s = date.start {
            sureLow = firstIndex(startAtLeast: s)
            low = date.strictStartDate ? sureLow : firstIndex(startAtLeast: s.subtractingSaturating(maxDuration))
        }
        if let e = date.end {
            high = firstIndex(startAtLeast: e)
            if date.strictEndDate { sureHigh = firstIndex(startAtLeast: e.subtractingSaturating(maxDuration)) }
        }
        var selection = Selection()
        guard low < high else { return selection }
        let sureFrom = min(max(sureLow, low), high)
        let sureTo = min(max(sureHigh, sureFrom), high)
        let allowedSources = filter.sources.map { _ in sources.infos.map(filter.matches(source:)) }
        let wantedUUIDs = filter.uuids
        let writer = filter.writer
        let values = filter.values
        let metadataPredicates = filter.metadata.flatMap { $0.isEmpty ? nil : $0 }
        let filtersRows =
            allowedSources != nil || wantedUUIDs != nil || writer != nil || values != nil || metadataPredicates != nil
        var hint = 0
        withColumns { c in
            func passes(_ row: Int) -> Bool {
                if let allowedSources, !allowedSources[Int(c.sourceIDs[row])] { return false }
                if let values, !values.matches(c.values[row]) { return false }
                if let wantedUUIDs, !wantedUUIDs.contains(uuid(ofRow: row, hint: &hint)) { return false }
                if let writer, self.writer(ofRow: row, hint: &hint) != writer { return false }
                if let metadataPredicates {
                    let row = metadata(ofRow: row)
                    if !metadataPredicates.allSatisfy({ $0.matches(row) }) { return false }
                }
                return true
            }
            for row in low..<sureFrom where date.matches(start: c.starts[row], end: c.ends[row]) && passes(row) {
                selection.add(row)
            }
            if filtersRows {
                for row in sureFrom..<sureTo where passes(row) { selection.add(row) }
            } else {
                selection.add(sureFrom..<sureTo)
            }
            for row in sureTo..<high where date.matches(start: c.starts[row], end: c.ends[row]) && passes(row) {
                selection.add(row)
            }
        }
        return selection
    }
}

extension Int64 {
    /// `self - other`, clamped to the representable range.
    func subtractingSaturating(_ other: Int64) -> Int64 {
        let (result, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other > 0 ? .min : .max) : result
    }
}
