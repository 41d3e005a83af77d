import Foundation

/// One fuzz target: a decoder fed the fuzzer's bytes, with the invariants it must keep.
struct Harness: Sendable {
    /// The name `HKFUZZ_HARNESS` selects it by, also the folder of its seeds in `Fuzz/corpus/`.
    let name: String
    /// What it feeds, one line.
    let summary: String
    /// Seeds built from the project's own encoders (the rest come from Protocol/vectors and Tests/Fixtures,
    /// see make-corpus.sh); written by `HKFUZZ_WRITE_SEEDS`.
    let seeds: @Sendable () -> [[UInt8]]
    /// Decodes one input; returns normally for accepted and cleanly rejected input alike.
    let run: @Sendable (inout FuzzInput) -> Void

    init(
        _ name: String, _ summary: String, seeds: @escaping @Sendable () -> [[UInt8]] = { [] },
        run: @escaping @Sendable (inout FuzzInput) -> Void
    ) {
        self.name = name
        self.summary = summary
        self.seeds = seeds
        self.run = run
    }

    /// Every harness, in the order run.sh runs them.
    static let all: [Harness] = [
        WireHarnesses.frame, WireHarnesses.message,
        CodecHarnesses.batch, CodecHarnesses.metadata, CodecHarnesses.metadataTable,
        CodecHarnesses.distinctMetadataTable, CodecHarnesses.inflate,
        StorageHarnesses.logRecord, StorageHarnesses.logSegment, StorageHarnesses.snapshot,
        StorageHarnesses.manifest, WorkoutHarnesses.workout, WorkoutHarnesses.snapshot,
        ProfileHarnesses.fields, ProfileHarnesses.snapshot,
        CorrelationHarnesses.correlation, CorrelationHarnesses.snapshot, RouteHarnesses.route,
        RouteHarnesses.snapshot, RouteHarnesses.gpx,
        ImportHarnesses.exportXML, ImportHarnesses.exportZip, ImportHarnesses.exportFields,
        ModelHarnesses.unit, BlockHarnesses.block, SnapshotBlockHarness.harness,
        HKQHarnesses.csv, HKQHarnesses.jsonLines, HKQHarnesses.dates,
        TLSHarnesses.layer, HTTPHarnesses.request,
    ]

    /// The harness `HKFUZZ_HARNESS` names, looked up once.
    static let selected: Harness? = {
        guard let name = ProcessInfo.processInfo.environment["HKFUZZ_HARNESS"] else { return nil }
        return all.first { $0.name == name }
    }()
}
