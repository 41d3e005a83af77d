import Foundation
import HealthPosix
import Testing

@Suite("Mapped files")
struct MappedFileTests {
    /// The resident bytes of the mapping starting at `address`, as /proc/self/smaps counts them.
    static func residentBytes(of address: UnsafeRawPointer) throws -> Int {
        let start = String(UInt(bitPattern: address), radix: 16)
        // Read to its end: /proc files report a size of 0.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var inMapping = false
        for line in smaps.split(separator: "\n") {
            if let dash = line.firstIndex(of: "-"), !line.hasPrefix(" "), line[..<dash].allSatisfy(\.isHexDigit) {
                inMapping = line[..<dash].drop { $0 == "0" } == start.drop { $0 == "0" }
            } else if inMapping, line.hasPrefix("Rss:") {
                return Int(line.split(separator: " ")[1])! * 1024
            }
        }
        throw CocoaError(.fileReadUnknown)
    }

    @Test("pages read through a mapping leave the process's resident memory when released, and read the same again")
    func releaseResidentPages() throws {
        let directory = try FileSystem.makeTemporaryDirectory(prefix: "hkmapped")
        defer { try? FileSystem.removeTree(directory) }
        let path = directory + "/data"
        let contents = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let file = try File(path: path, options: [.create, .write])
        try file.write(contents)
        file.close()

        let mapped = try MappedFile(path: path)
        let address = try #require(mapped.bytes.baseAddress)
        #expect(Array(mapped.bytes) == contents)
        #expect(try Self.residentBytes(of: address) >= 4 << 20)
        mapped.releaseResidentPages()
        #expect(try Self.residentBytes(of: address) < 64 << 10)
        #expect(Array(mapped.bytes) == contents)
    }
}
