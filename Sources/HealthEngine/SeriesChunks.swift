import HealthModel

extension Series {
    /// Runs `body` on each chunk of rows the selection reaches (a sealed block decoded into one reused buffer,
    /// or the head), in start order: the chunk's columns, the selected rows inside it numbered for those columns,
    /// and the row number of its first row. Reductions that keep their state across calls (``FigureReducer``,
    /// ``BucketSums/addRun(_:_:maxDuration:)``) read a selection this way without decoding it all at once.
    /// A sealed block whose rows are all selected is offered to `whole` first, and not decoded when `whole` takes
    /// it (returns true: it used the block's summary, or read it without decoding); a non-escaping closure, so
    /// what it captures is not boxed. Without `sourceIDs` the chunks' ``Columns`` hold no source ids (sealed
    /// blocks' are not decoded).
    func forEachChunk(
        of selection: Selection, sourceIDs: Bool = true, whole: (SealedBlock) -> Bool = { _ in false },
        _ body: (Columns, Selection, _ firstRow: Int) -> Void
    ) {
        let runs = selection.runs
        var next = 0
        /// The selected rows of `chunk`, numbered from its first row (consumes the runs that end inside it).
        func local(_ chunk: Range<Int>) -> Selection {
            var local = Selection()
            while next < runs.count, runs[next].lowerBound < chunk.upperBound {
                let run = runs[next].clamped(to: chunk)
                local.add((run.lowerBound - chunk.lowerBound)..<(run.upperBound - chunk.lowerBound))
                if runs[next].upperBound > chunk.upperBound { break }
                next += 1
            }
            return local
        }
        var pending: Selection? = nil
        rows.forEachChunk(
            overlapping: selection.span, sourceIDs: sourceIDs,
            decodes: { firstRow, block in
                let selected = local(firstRow..<(firstRow + block.count))
                if selected.count == block.count, whole(block) { return false }
                pending = selected
                return true
            }
        ) { c, firstRow in
            let selected = pending ?? local(firstRow..<(firstRow + c.starts.count))
            pending = nil
            if !selected.isEmpty { body(c, selected, firstRow) }
        }
    }

    /// The most recent of the selected rows (not empty; ``LatestSample``'s rule), read from the last chunk
    /// back: a chunk is decoded only while a row in it could still end after the latest end found.
    func latestSample(of selection: Selection) -> LatestSample {
        var latest = LatestSample(maxDuration: maxDuration)
        var runIndex = selection.runs.count - 1
        rows.forEachChunkBackwards(overlapping: selection.span) { c, firstRow in
            let chunk = firstRow..<(firstRow + c.starts.count)
            while runIndex >= 0, selection.runs[runIndex].upperBound > chunk.lowerBound {
                let run = selection.runs[runIndex].clamped(to: chunk)
                latest.add(c, (run.lowerBound - firstRow)..<(run.upperBound - firstRow), offset: firstRow)
                if selection.runs[runIndex].lowerBound < chunk.lowerBound { break }
                runIndex -= 1
            }
            // Rows before this chunk start no later than its first row: they end by its start + maxDuration.
            let (reach, overflow) = c.starts[0].addingReportingOverflow(maxDuration)
            return runIndex >= 0 && (overflow || reach >= latest.end)
        }
        return latest
    }

    /// Whether the selected rows certainly come from one source identity, judged without decoding: every
    /// source of the blocks they lie in (and of the head rows among them) has the same identity.
    func isSingleIdentity(_ selection: Selection) -> Bool {
        guard sources.identities.count > 1 else { return true }
        let identityOfSource = sources.identityOfSource
        let identities = Set(rows.sourceIDs(in: selection.span).map { identityOfSource[Int($0)] })
        return identities.count <= 1
    }
}
