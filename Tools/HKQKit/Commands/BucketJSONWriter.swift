import HealthModel
import HealthWire

/// Writes a collection report's buckets as JSON objects into a ``JSONWriter``: the members
/// ``CollectionReport/jsonMembers()`` declares, or those `--fields` picks, in its order. Keys and the unit are
/// encoded once, and a bucket's start that is the previous bucket's end is copied from its bytes.
struct BucketJSONWriter {
    /// A member written and where its `"key":` lies in ``literals``. (A struct, not a tuple: an array of tuples
    /// has its type metadata made at run time, tens of microseconds at every hkq start.)
    private struct Member {
        let value: CollectionReport.JSONMember.Value
        let key: Range<Int>
    }

    /// The members written.
    private let members: [Member]
    private let figures: [FigureColumn]
    /// Every figure, as a source's object lists them (in the order of ``figures``).
    private let sourceFigures: [Member]
    /// `"source":` in ``literals``.
    private let sourceKey: Range<Int>
    /// The unit's string literal in ``literals``.
    private let unit: Range<Int>
    private let literals: [UInt8]
    private let times: TimestampFormatter
    /// The end written last and where its bytes lie, while they are in the writer's buffer.
    private var previousEnd: (instant: Timestamp, bytes: Range<Int>)?

    /// A writer of `report`'s buckets with the keys `fields` names (checked before, see
    /// ``CollectionReport/check(_:commandPath:)``), all of them without.
    init(_ report: CollectionReport, fields: FieldSelection?) {
        var literals = JSONWriter()
        func key(_ name: String) -> Range<Int> {
            let start = literals.bytes.count
            literals.key(name)
            return start..<literals.bytes.count
        }
        let declared = report.jsonMembers()
        let selected = fields.map { $0.fields.compactMap { field in declared.first { $0.key == field } } } ?? declared
        members = selected.map { Member(value: $0.value, key: key($0.key)) }
        let figures = report.figureColumns
        self.figures = figures
        sourceFigures = figures.indices.map { Member(value: .figure($0), key: key(figures[$0].column.key)) }
        sourceKey = key("source")
        let unitStart = literals.bytes.count
        literals.string(report.unitText)
        unit = unitStart..<literals.bytes.count
        self.literals = literals.bytes
        times = report.times
    }

    /// Writes `bucket` as one object; with `kind` a `"kind"` member first (`hkq watch`'s lines).
    mutating func write(_ bucket: Statistics, to json: inout JSONWriter, kind: String? = nil) {
        json.beginObject()
        if let kind {
            json.key("kind")
            json.string(kind)
        }
        literals.withUnsafeBufferPointer { literals in
            for member in members {
                json.key(encoded: UnsafeBufferPointer(rebasing: literals[member.key]))
                switch member.value {
                case .start:
                    if let previousEnd, previousEnd.instant == bucket.start {
                        json.repeatValue(previousEnd.bytes)
                    } else {
                        times.writeMachineValue(bucket.start, to: &json)
                    }
                case .end:
                    previousEnd = (bucket.end, times.writeMachineValue(bucket.end, to: &json))
                case .figure(let index):
                    json.value(figures[index].cell(bucket.figures))
                case .unit:
                    json.value(encoded: UnsafeBufferPointer(rebasing: literals[unit]))
                case .sources:
                    json.beginArray()
                    for own in bucket.bySource {
                        json.beginObject()
                        json.key(encoded: UnsafeBufferPointer(rebasing: literals[sourceKey]))
                        json.string(own.source.name)
                        for index in figures.indices {
                            json.key(encoded: UnsafeBufferPointer(rebasing: literals[sourceFigures[index].key]))
                            json.value(figures[index].cell(own.figures))
                        }
                        json.endObject()
                    }
                    json.endArray()
                }
            }
        }
        json.endObject()
    }

    /// Says that the writer's buffer was flushed: the next start is formatted, not copied.
    mutating func flushed() { previousEnd = nil }
}
