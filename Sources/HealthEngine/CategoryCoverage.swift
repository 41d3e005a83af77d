import HealthModel

/// The time a category type's samples cover per value, merged across sources (HEALTHKIT.md §8, §12).
///
/// Time is cut into elementary segments at every sample boundary, as ``SourceMerge`` cuts it for sums. In each
/// segment the highest-priority source among those with a sample covering it wins, and the segment counts for
/// **one** value of the winner's covering samples: the highest raw value among them **[ours]** (for sleep a stage
/// or awake wins over in bed; a source rarely overlaps itself otherwise). The type's envelope value
/// (``CategoryValueSet/envelope``, sleep's in bed) competes only where no source has another value: a phone's
/// bedtime says where the person was, not how they slept, so it never hides a watch's stages or an app's sleep,
/// whatever the order. Every other sample covering the segment is dropped there. So per-value times never overlap: their sum is the union of the samples' intervals, and an
/// iPhone's in-bed interval, a Watch's stages and a third-party app's sleep never add up to more than the time
/// they span. Samples without a duration cover nothing.
///
/// The sweep reuses the merge sinks: value `v`'s segments reach `sinks[v]` as `segment(from:to:rate: 1)`, so a
/// ``WindowTotal`` totals microseconds and a ``BucketSums`` spreads them over collection buckets.
enum CategoryCoverage {
    /// Raw values the sweep distinguishes: one more than the largest raw value of any category enumeration.
    static let valueCount: Int =
        (QuantityType.categories.compactMap { $0.categoryValues?.values.last?.rawValue }.max() ?? 0) + 1

    /// Feeds each value's merged segments, in time order, to `sinks[value]` (`sinks.count == valueCount`).
    /// `sourceRanks` gives each source id's rank (0 = highest priority, every rank `< rankCount`). A row whose
    /// value is not a raw value below ``valueCount`` (which validation never stores) is skipped.
    /// `envelope` is the type's ``CategoryValueSet/envelope``.
    static func sweep<Sink: MergeSink>(
        _ c: Columns, _ selection: Selection, sourceRanks: [Int], rankCount: Int, envelope: Int?,
        into sinks: inout [Sink]
    ) {
        let slots = valueCount
        // Per rank: its samples in progress with a value other than the envelope.
        var active = [Int](repeating: 0, count: rankCount)
        // Per rank and value: how many of its samples with that value are in progress.
        var counts = [Int](repeating: 0, count: rankCount * slots)
        var activeCount = 0
        var envelopeCount = 0
        var sweep = BoundarySweep(selection)
        func change(_ row: Int, by step: Int, slot: Int) {
            let rank = sourceRanks[Int(c.sourceIDs[row])]
            counts[rank * slots + slot] += step
            if slot == envelope {
                envelopeCount += step
            } else {
                active[rank] += step
                activeCount += step
            }
        }
        while let (previous, time) = sweep.advance(c) {
            if time > previous, activeCount > 0 {
                var winner = 0
                while active[winner] == 0 { winner += 1 }
                var slot = slots - 1
                while counts[winner * slots + slot] == 0 || slot == envelope { slot -= 1 }
                sinks[slot].segment(from: previous, to: time, rate: 1)
            } else if time > previous, envelopeCount > 0, let envelope {
                sinks[envelope].segment(from: previous, to: time, rate: 1)
            }
            while let row = sweep.nextEnding(at: time, c) {
                change(row, by: -1, slot: Int(c.values[row]))
            }
            while let row = sweep.nextStarting(at: time, c) {
                guard c.ends[row] > time, let slot = slot(c.values[row]) else { continue }
                change(row, by: 1, slot: slot)
                sweep.activate(row, c)
            }
        }
    }

    /// The sweep slot of a stored value, `nil` for anything but a raw value below ``valueCount``.
    private static func slot(_ value: Double) -> Int? {
        guard let raw = Int(exactly: value), raw >= 0, raw < valueCount else { return nil }
        return raw
    }

    /// The totals of ``WindowTotal`` sinks as the figure: values that cover time, in increasing raw value.
    static func durations(_ totals: [WindowTotal]) -> [ValueDuration] {
        totals.indices.compactMap { value in
            let micros = Int64(totals[value].total.rounded())
            return micros > 0 ? ValueDuration(value: value, duration: micros) : nil
        }
    }
}

extension Series {
    /// The merged time per value of the selected rows (all sources, by priority), in microseconds; `envelope`
    /// is the type's ``CategoryValueSet/envelope``.
    func valueDurations(_ c: Columns, _ selection: Selection, envelope: Int?) -> [ValueDuration] {
        var totals = [WindowTotal](repeating: WindowTotal(window: nil), count: CategoryCoverage.valueCount)
        CategoryCoverage.sweep(
            c, selection, sourceRanks: sources.sourceRanks(), rankCount: sources.identities.count, envelope: envelope,
            into: &totals)
        return CategoryCoverage.durations(totals)
    }

    /// The merged time per value of the selected rows in each bucket of `bounds`: one ``BucketSums`` per value.
    func bucketValueDurations(_ c: Columns, _ selection: Selection, bounds: [Timestamp], envelope: Int?)
        -> [BucketSums]
    {
        var sums = [BucketSums](repeating: BucketSums(bounds: bounds), count: CategoryCoverage.valueCount)
        CategoryCoverage.sweep(
            c, selection, sourceRanks: sources.sourceRanks(), rankCount: sources.identities.count, envelope: envelope,
            into: &sums)
        return sums
    }
}
