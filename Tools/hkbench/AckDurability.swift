/// What an insert acknowledgement promises, for every W1 figure's label (reference/PEERS.md asks for one).
///
/// This server version keeps samples in memory only. When the durability issue lands, its modes (WAL written,
/// fsynced per batch, group commit…) become cases here, `hkbench w1 --fsync <mode>` selects them in the
/// ServerConfiguration of the in-process server, and the label follows.
enum AckDurability: String, CaseIterable, Sendable {
    /// Applied to the in-memory store; lost if the process dies.
    case off

    /// The label printed next to each ingest figure.
    var label: String {
        switch self {
        case .off: "applied in memory (no WAL, no fsync; lost if hkd dies)"
        }
    }

    /// The mode named by `--fsync`, or a usage error listing the modes this server version has.
    static func named(_ name: String?) throws -> AckDurability {
        guard let name else { return .off }
        guard let mode = AckDurability(rawValue: name) else {
            let modes = allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError(
                message: "--fsync '\(name)' is not available: this server version acknowledges batches in memory "
                    + "(modes: \(modes))")
        }
        return mode
    }
}
