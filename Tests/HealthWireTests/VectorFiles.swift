import Foundation
import HealthCodec
import HealthModel

@testable import HealthWire

/// Reads and writes the golden vector files of Protocol/vectors/.
///
/// A vector file is `key: value` lines after `#` comment lines. Valid frames have `kind`, `hex` and `value`
/// (the decoded message as `String(reflecting:)` prints it); malformed ones have `hex`, `limits`
/// (max frame bytes and max inflated bytes) and the `error` code and `message` they must produce.
struct VectorFile {
    var name: String
    var fields: [String: String]
    var comments: [String]

    static let directory: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("Protocol/vectors")
    }()

    static func load(_ subdirectory: String) throws -> [VectorFile] {
        let folder = directory.appendingPathComponent(subdirectory)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".vector") }
        return try names.sorted().map { name in
            try parse(
                name: String(name.dropLast(".vector".count)),
                text: String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))
        }
    }

    static func parse(name: String, text: String) throws -> VectorFile {
        var fields: [String: String] = [:]
        var comments: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("#") {
                comments.append(String(line.dropFirst(1)).trimmingCharacters(in: .whitespaces))
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = String(line[line.index(after: colon)...]).trimmingCharacters(
                in: .whitespaces)
        }
        return VectorFile(name: name, fields: fields, comments: comments)
    }

    func write(to subdirectory: String, order: [String]) throws {
        var text = comments.map { "# \($0)\n" }.joined()
        for key in order { if let value = fields[key] { text += "\(key): \(value)\n" } }
        let folder = VectorFile.directory.appendingPathComponent(subdirectory)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try text.write(to: folder.appendingPathComponent("\(name).vector"), atomically: false, encoding: .utf8)
    }

    var bytes: [UInt8] { VectorFile.bytes(hex: fields["hex"] ?? "") }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { HealthCodec.hex($0) }.joined() }

    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).map { i in
            UInt8(String(decoding: digits[i...i + 1], as: UTF8.self), radix: 16)!
        }
    }
}
