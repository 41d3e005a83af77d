import Foundation
import HealthEngine
import HealthModel

/// Server info across a cluster: each node keeps what its partitions hold in the settings bucket (key
/// `contents.<node>`, Protocol/STORAGE.md), and a node asked for server info adds up, partition by partition, the
/// figures of the node holding each one. Figures of other nodes are as of their last publication (every few
/// seconds); this node's are current.
public struct ClusterContents: Sendable {
    /// The entry of one node: its partitions' contents, keyed by partition index in decimal.
    struct Entry: Codable {
        var partitions: [String: StoreContents]
    }

    let bucket: KeyValueBucket
    let node: String

    /// The contents of `node` in the cluster whose settings are `bucket`.
    public init(bucket: KeyValueBucket, node: String) {
        self.bucket = bucket
        self.node = node
    }

    static func key(of node: String) -> String { "contents.\(node)" }

    /// Records the contents of the partitions this node holds. Throws ``ErrorCode/storageUnavailable``.
    public func publish(_ partitions: [Int: StoreContents]) throws {
        let entry = Entry(partitions: Dictionary(uniqueKeysWithValues: partitions.map { (String($0.key), $0.value) }))
        let bytes = Array(try JSONEncoder().encode(entry))
        do throws(NATSFailure) {
            try bucket.put(Self.key(of: node), bytes)
        } catch {
            throw error.healthError
        }
    }

    /// The cluster's contents: for each of `partitions` the figures of its holder (`holder(index)`, `nil` when
    /// none: counted as empty), this node's own from `own`. Throws ``ErrorCode/storageUnavailable``.
    public func merged(
        partitions: Int, own: [Int: StoreContents], holder: (Int) -> String?
    ) throws -> StoreContents {
        var entries: [String: Entry] = [:]
        var total = StoreContents()
        for index in 0..<partitions {
            guard let holder = holder(index) else { continue }
            if holder == node {
                if let mine = own[index] { total.add(mine) }
                continue
            }
            if entries[holder] == nil { entries[holder] = try entry(of: holder) }
            if let theirs = entries[holder]?.partitions[String(index)] { total.add(theirs) }
        }
        return total
    }

    /// What `node` last published; empty when it never did or the entry does not parse.
    private func entry(of node: String) throws -> Entry {
        do throws(NATSFailure) {
            guard let stored = try bucket.get(Self.key(of: node)) else { return Entry(partitions: [:]) }
            return (try? JSONDecoder().decode(Entry.self, from: Data(stored.value))) ?? Entry(partitions: [:])
        } catch {
            throw error.healthError
        }
    }
}
