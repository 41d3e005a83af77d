import HealthStorage

/// What an insert acknowledgement promises, for every W1 figure's label (docs/PEERS.md asks for one).
///
/// `hkbench w1 --fsync always|interval|never` sets the in-process server's write-ahead-log policy
/// (`hkd --fsync`); against an external server the label says it follows that server's setting.
struct AckDurability: Sendable {
    var policy: FsyncPolicy
    var external: Bool

    /// The label printed next to each ingest figure.
    var label: String {
        if external { return "as the external hkd's --fsync promises" }
        switch policy {
        case .always: return "written to the WAL and fsynced (group commit); survives kill -9 and power loss"
        case .interval: return "written to the WAL, fsynced within a second; survives kill -9"
        case .never: return "written to the WAL, not fsynced; survives kill -9, not power loss"
        }
    }

    /// The policy named by `--fsync` (default always), or a usage error listing the policies.
    static func named(_ name: String?, external: Bool) throws -> AckDurability {
        guard let name else { return AckDurability(policy: .always, external: external) }
        guard let policy = FsyncPolicy(rawValue: name) else {
            let modes = FsyncPolicy.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError(message: "--fsync takes \(modes), not '\(name)'")
        }
        return AckDurability(policy: policy, external: external)
    }
}
