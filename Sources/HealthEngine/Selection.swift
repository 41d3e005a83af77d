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

    /// Adds the rows of another selection, all after the rows added so far.
    mutating func add(_ other: Selection) {
        for run in other.runs { add(run) }
    }

    /// The selected rows within `range`.
    func clipped(to range: Range<Int>) -> Selection {
        var clipped = Selection()
        for run in runs where run.overlaps(range) { clipped.add(run.clamped(to: range)) }
        return clipped
    }

    /// Every selected row, ascending.
    var rows: FlattenSequence<[Range<Int>]> { runs.joined() }

    /// From the first selected row to the last (empty when nothing is selected).
    var span: Range<Int> {
        guard let first = runs.first, let last = runs.last else { return 0..<0 }
        return first.lowerBound..<last.upperBound
    }

    /// The same rows numbered `offset` higher.
    func shifted(by offset: Int) -> Selection {
        guard offset != 0 else { return self }
        var shifted = self
        shifted.runs = runs.map { ($0.lowerBound + offset)..<($0.upperBound + offset) }
        return shifted
    }
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
    /// one run without a per-row test (nor a decode); only the edges are decoded and tested row by row.
    func select(_ filter: SampleFilter) -> Selection {
        usage.touch()
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
        // Only a UUID filter names rows.
        var namer = wantedUUIDs == nil ? nil : namer
        /// Adds the rows of `range` that pass the filter, testing the date predicate too when `testsDate`.
        func scan(_ range: Range<Int>, testsDate: Bool) {
            guard !range.isEmpty else { return }
            let w = decodedRows(in: range)
            for local in 0..<w.count {
                if testsDate, !date.matches(start: w.starts[local], end: w.ends[local]) { continue }
                if let allowedSources, !allowedSources[Int(w.sourceIDs[local])] { continue }
                if let values, !values.matches(w.values[local]) { continue }
                if let wantedUUIDs, !wantedUUIDs.contains(namer!.uuid(local, of: w)) { continue }
                if let writer, self.writer(anchor: w.arrivals[local], hint: &hint) != writer { continue }
                if let metadataPredicates {
                    let row = metadata(anchor: w.arrivals[local])
                    if !metadataPredicates.allSatisfy({ $0.matches(row) }) { continue }
                }
                selection.add(range.lowerBound + local)
            }
        }
        scan(low..<sureFrom, testsDate: true)
        if filtersRows {
            scan(sureFrom..<sureTo, testsDate: false)
        } else {
            selection.add(sureFrom..<sureTo)
        }
        scan(sureTo..<high, testsDate: true)
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
