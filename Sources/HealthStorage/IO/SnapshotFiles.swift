import Foundation
import HealthCodec
import HealthEngine
import HealthModel
import HealthPosix

/// Writes snapshot generations into a directory and reads the current one back (Protocol/STORAGE.md).
/// Blocking file I/O; the caller serialises writes.
struct SnapshotFiles: Sendable {
    let directory: String

    var manifestPath: String { directory + "/" + Self.manifestName }
    /// The manifest's file name.
    static let manifestName = "MANIFEST"
    /// The suffix start-up gives a snapshot file no manifest names (what a snapshot that did not finish left).
    static let unfinishedSuffix = ".unfinished"

    /// The current manifest, `nil` before the first snapshot. Throws naming the file for a damaged one.
    func readManifest() throws -> SnapshotManifest? {
        guard try FileSystem.exists(manifestPath) else { return nil }
        let bytes = try FileSystem.readFile(manifestPath, maxBytes: 16 << 20)
        do {
            return try SnapshotManifest.decode(bytes)
        } catch let error as CodecError {
            throw HealthError(.storageUnavailable, "\(manifestPath): \(error.message)")
        }
    }

    /// The names of the snapshot files (`*.snap`) in the directory, sorted.
    func snapshotFiles() throws -> [String] {
        try FileSystem.contentsOfDirectory(directory).filter { $0.hasSuffix(".snap") }
    }

    /// Reads the file `entry` names, checks its size and trailer against the entry, and decodes it with `body`.
    /// With `mapping`, the file is also mapped read-only and `body` gets the mapping, where the file's sealed
    /// blocks and element extras can stay (cold), its pages released from the process's resident memory once
    /// `body` returns; otherwise `body` gets nil.
    func decode<T>(
        _ entry: SnapshotManifest.Entry, mapping: Bool = false, _ body: ([UInt8], (any BlockMemory)?) throws -> T
    ) throws -> T {
        let path = directory + "/" + entry.file
        guard try FileSystem.exists(path) else {
            throw HealthError(.storageUnavailable, "\(path): snapshot listed in \(manifestPath) is missing")
        }
        var memory: ColdSegment?
        let bytes: [UInt8]
        if mapping, entry.size > 0, let mapped = try? MappedFile(path: path) {
            // Mapped (never written while mapped: snapshot files are written whole under a new name), and read
            // once through the mapping to check and decode it. A file that cannot be mapped is read instead: its
            // blocks and listed names then take the heap.
            let segment = ColdSegment(mapped)
            memory = segment
            bytes = Array(segment.bytes.prefix(Int(clamping: entry.size) + 1))
        } else {
            bytes = try FileSystem.readFile(path, maxBytes: Int(clamping: entry.size) + 1)
        }
        guard bytes.count == Int(clamping: entry.size) else {
            throw HealthError(
                .storageUnavailable,
                "\(path): \(bytes.count) bytes where \(manifestPath) lists \(entry.size) (damage at offset \(min(bytes.count, Int(clamping: entry.size))))"
            )
        }
        do {
            guard SnapshotFiles.trailer(bytes) == entry.crc else {
                throw CodecError(.malformedPayload, "the file does not match its manifest entry (offset 0)")
            }
            let decoded = try body(bytes, memory?.bytes.count == bytes.count ? memory : nil)
            // Checking, decoding and restoring read every page of the mapping; what stays there is touched again
            // only by queries, so it need not count as the process's memory until then.
            memory?.releaseResidentPages()
            return decoded
        } catch let error as CodecError {
            throw HealthError(.storageUnavailable, "\(path): \(error.message)")
        }
    }

    /// Writes a new generation: every shard's image (taken with `image`), then each part of the stores kept apart
    /// from the shards that holds anything (`keptApart`: ``SnapshotPart/keptApart(of:subjects:mark:)``) as a
    /// file of its own, then the manifest; returns it. A shard's file holding element extras is mapped once
    /// written, and `placeExtras` learns where they lie in it (``HealthStore/placeListedNames(of:_:in:)``).
    func write(
        generation: UInt64, images: (QuantityType) -> (ShardImage, UInt64),
        keptApart: () -> [SnapshotPart] = { [] },
        placeExtras: (QuantityType, [NamePlacement], any BlockMemory) -> Void = { _, _, _ in }
    ) throws -> (SnapshotManifest, bytes: Int, samples: Int) {
        var entries: [SnapshotManifest.Entry] = []
        var total = 0
        var samples = 0
        for type in QuantityType.all {
            let (image, sequence) = images(type)
            if image.series.isEmpty {
                entries.append(.init(type: type.identifier, file: "", sequence: sequence, size: 0, crc: 0))
                continue
            }
            let name = "\(type.identifier)-\(generation).snap"
            var written: (crc: UInt32, size: Int) = (0, 0)
            var placements: [NamePlacement] = []
            try FileSystem.writeFileAtomically(directory + "/" + name, permissions: 0o600) { file in
                written = try SnapshotCodec.encode(
                    image, sequence: sequence,
                    to: { piece throws(SystemError) in try file.write(piece) },
                    placing: { placements.append($0) })
            }
            // A file that cannot be mapped leaves the extras where they are: the snapshot itself is written.
            if !placements.isEmpty, let mapped = try? MappedFile(path: directory + "/" + name) {
                placeExtras(type, placements, ColdSegment(mapped))
            }
            entries.append(
                .init(
                    type: type.identifier, file: name, sequence: sequence, size: UInt64(written.size),
                    crc: written.crc))
            total += written.size
            samples += image.sampleCount
        }
        // A store that holds nothing gets no file, so data directories without any keep their manifests as they
        // were.
        for part in keptApart() where !part.bytes.isEmpty {
            let entry = try writeWhole(type: part.type, generation: generation, part.bytes, part.sequence)
            entries.append(entry)
            total += Int(entry.size)
        }
        let manifest = SnapshotManifest(generation: generation, entries: entries)
        try FileSystem.writeFileAtomically(manifestPath, manifest.encode(), permissions: 0o600)
        return (manifest, total, samples)
    }

    /// Writes `bytes`, the whole snapshot of a store kept apart from the shards, as `<type>-<generation>.snap`.
    private func writeWhole(type: String, generation: UInt64, _ bytes: [UInt8], _ sequence: UInt64) throws
        -> SnapshotManifest.Entry
    {
        let name = "\(type)-\(generation).snap"
        try FileSystem.writeFileAtomically(directory + "/" + name, bytes, permissions: 0o600)
        return .init(
            type: type, file: name, sequence: sequence, size: UInt64(bytes.count), crc: SnapshotFiles.trailer(bytes))
    }

    /// Removes snapshot files the manifest does not name (older generations) and those start-up set aside as
    /// unfinished (their records are in this generation now).
    func removeUnlisted(keeping manifest: SnapshotManifest) throws {
        let keep = Set(manifest.entries.map(\.file))
        for name in try snapshotFiles() where !keep.contains(name) {
            try FileSystem.remove(directory + "/" + name)
        }
        for name in try FileSystem.contentsOfDirectory(directory) where name.hasSuffix(".snap" + Self.unfinishedSuffix)
        {
            try FileSystem.remove(directory + "/" + name)
        }
    }

    /// The last four bytes (the file's own CRC-32), little-endian.
    static func trailer(_ bytes: [UInt8]) -> UInt32 {
        guard bytes.count >= 4 else { return 0 }
        return UInt32(
            littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self) })
    }
}
