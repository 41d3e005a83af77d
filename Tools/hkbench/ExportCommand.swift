import Foundation

/// `hkbench export`: writes a synthetic Apple Health export, for `hkq import` and `hkbench capacity --export`.
enum ExportCommand: BenchCommand {
    static let name = "export"
    static let abstract =
        "Write a synthetic Apple Health export (export.zip) shaped like an agent's stream or a real phone's."
    static let options: [(flag: String, help: String)] = [
        ("--records <n>", "Records in the export (default 2000000)."),
        (
            "--shape plain|real",
            "plain: hkbench import's export (one source, a record a minute, no metadata); real: two devices, "
                + "irregular instants, heart-rate and sleep metadata, synced weights (default real)."
        ),
        ("--seed <n>", "The seed of the real shape's draws (default 42)."),
        ("--out <file>", "Where to write the zip (required)."),
    ]

    static func run(_ options: ParsedOptions) throws {
        guard let path = options.string("--out") else { throw UsageError(message: "--out <file> is required") }
        let records = try options.integer("--records", default: 2_000_000, in: 1...50_000_000)
        let seed = try options.integer("--seed", default: 42, in: 0...Int.max)
        let xml: [UInt8]
        let samples: [String: Int]
        switch options.string("--shape") ?? "real" {
        case "plain":
            (xml, samples) = (SyntheticExport.xml(records: records), SyntheticExport.sampleCounts(records: records))
        case "real": (xml, samples) = RealShapedExport.xml(records: records, seed: UInt64(seed))
        case let other: throw UsageError(message: "--shape is plain or real, not \(other)")
        }
        let zip = SyntheticExport.zip(xml)
        try Data(zip).write(to: URL(fileURLWithPath: path))
        let perType = samples.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        print("hkbench export: \(records) records to \(path) (\(zip.count) bytes; export.xml \(xml.count)): \(perType)")
    }
}
