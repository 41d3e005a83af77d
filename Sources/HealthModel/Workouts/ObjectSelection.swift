import Foundation

/// The checks every object filter (``WorkoutFilter``, ``CorrelationFilter``) shares: a start range, UUIDs, changes
/// after an anchor, and the writer of the read rule.
enum ObjectSelection {
    /// Whether an object starting at `objectStart` with `uuid`, stored with `anchor` by `objectWriter`, starts
    /// within `start..<end` (each side open when `nil`), is among `uuids`, is newer than `afterAnchor`, and was
    /// written by `writer` (when set).
    static func matches(
        start: Timestamp?, end: Timestamp?, uuids: Set<UUID>?, afterAnchor: UInt64, writer: UInt32?,
        objectStart: Timestamp, uuid: UUID, anchor: UInt64, objectWriter: UInt32
    ) -> Bool {
        if let start, objectStart < start { return false }
        if let end, objectStart >= end { return false }
        if let uuids, !uuids.contains(uuid) { return false }
        if anchor <= afterAnchor { return false }
        if let writer, objectWriter != writer { return false }
        return true
    }
}
