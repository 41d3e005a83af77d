import Foundation
import HealthWire

/// The golden frames of Protocol/vectors/ (found from `HKFUZZ_ROOT`, the repository root, default `..`), as seed
/// material.
enum Vectors {
    /// A valid vector's frame, decoded.
    struct Valid {
        var kind: MessageKind
        var payload: [UInt8]
    }

    /// Every vector's frame bytes, valid and malformed.
    static func frames() -> [[UInt8]] {
        ["valid", "malformed"].flatMap { folder in files(folder).compactMap { hexField($0) } }
    }

    /// The valid vectors' frames, decoded (uncompressed, as the files hold them).
    static func valid() -> [Valid] {
        files("valid").compactMap { text in
            guard let bytes = hexField(text) else { return nil }
            var decoder = FrameDecoder(limits: .standard)
            decoder.append(bytes)
            guard let frame = try? decoder.next() else { return nil }
            return Valid(kind: frame.kind, payload: frame.payload)
        }
    }

    /// The texts of `Protocol/vectors/<folder>/*.vector`, sorted by name.
    static func files(_ folder: String) -> [String] {
        let root = ProcessInfo.processInfo.environment["HKFUZZ_ROOT"] ?? ".."
        let directory = "\(root)/Protocol/vectors/\(folder)"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".vector") }.sorted().compactMap {
            try? String(contentsOfFile: "\(directory)/\($0)", encoding: .utf8)
        }
    }

    /// The bytes of a vector's `hex:` line.
    static func hexField(_ text: String) -> [UInt8]? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("hex:") }) else { return nil }
        let digits = Array(line.dropFirst(4).filter { $0.isHexDigit }.utf8)
        guard digits.count % 2 == 0 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).map { i in
            UInt8(String(decoding: digits[i..<i + 2], as: UTF8.self), radix: 16)!
        }
    }
}
