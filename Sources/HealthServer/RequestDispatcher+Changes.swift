import HealthEngine
import HealthModel
import HealthWire

extension RequestDispatcher {
    /// Answers a changes query (HEALTHKIT.md §9): added samples in arrival order and deleted objects after the
    /// anchor, at most `limit` together, and the anchor to continue from.
    func changesReply(_ m: ChangesQuery) throws -> [Message] {
        let set = try store.changes(
            subject: m.subject, type: m.type, filter: m.filter, anchor: m.anchor,
            limit: m.limit == 0 ? rowsPerResultFrame : min(Int(clamping: m.limit), rowsPerResultFrame),
            unit: m.unit.isEmpty ? nil : m.unit)
        return [.changesResult(ChangesResult(set, subject: m.subject))]
    }
}
