import Foundation
import TestSupport
import Testing

@testable import HKQKit

/// Runs the built `hkq` executable as a separate process.
@Suite struct BinaryTests {
    /// The `hkq` built with the tests: next to the test bundle's executable, else `.build/debug/hkq` under the
    /// package root found by walking up from this file.
    static func hkqURL() throws -> URL {
        var candidates: [URL] = []
        if let bundle = Bundle.main.executableURL {
            candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("hkq"))
        }
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("Package.swift").path) {
                candidates.append(directory.appendingPathComponent(".build/debug/hkq"))
                break
            }
            directory.deleteLastPathComponent()
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw BinaryMissing(searched: candidates.map(\.path))
        }
        return found
    }

    struct BinaryMissing: Error, CustomStringConvertible {
        var searched: [String]
        var description: String { "hkq not built; looked in \(searched.joined(separator: ", "))" }
    }

    /// Runs hkq with `arguments` (and `input` on standard input, else none) in an empty directory with exactly
    /// `environment`, without blocking a test thread.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], input: String? = nil
    ) async throws -> (Int32, String, String) {
        let outcome = try await runChild(try hkqURL().path, arguments, environment: environment, input: input)
        return (outcome.status, outcome.output, outcome.errors)
    }

    @Test func helpConvertAndErrorsThroughTheRealBinary() async throws {
        let (helpStatus, help, _) = try await Self.run(["--help"])
        #expect(helpStatus == 0)
        #expect(help.hasPrefix("OVERVIEW: "))
        #expect(help.contains("\nCOMMANDS:\n") && help.contains("\nOPTIONS:\n"))

        let (convertStatus, converted, convertErrors) = try await Self.run(["units", "convert", "1", "mi", "m"])
        #expect(convertStatus == 0)
        #expect(converted == "1609.344\n")
        #expect(convertErrors == "")

        let (unknownStatus, unknownOut, unknownErr) = try await Self.run(["frobnicate"])
        #expect(unknownStatus == 64)
        #expect(unknownOut == "")
        #expect(unknownErr.hasPrefix("error: unknown command 'frobnicate'\n"))

        let (failStatus, _, failErr) = try await Self.run(["units", "convert", "1", "kg", "count"])
        #expect(failStatus == 65)
        #expect(failErr == "error: cannot convert from \"kg\" (mass) to \"count\" (dimensionless)\n")
    }

    @Test func environmentReachesTheBinary() async throws {
        let (status, _, err) = try await Self.run(["types"], environment: ["HKQ_SERVER": "broken:"])
        #expect(status == 64)
        #expect(err.hasPrefix("error: invalid server address 'broken:' in HKQ_SERVER"))
        let (okStatus, out, _) = try await Self.run(["types", "--format", "csv"])
        #expect(okStatus == 0)
        #expect(out.hasPrefix("identifier,fullIdentifier,unit,style,kind,values\nstepCount,"))
    }

    @Test("hkq keeps the HKQ_ variables of its environment, values with '=' whole, and no others")
    func hkqVariables() {
        let entries = ["PATH=/bin", "HKQ_SUBJECT=anna", "HKQ_TOKEN=a=b", "XHKQ_SERVER=x", "HKQ_EMPTY=", "HKQ"]
        var pointers: [UnsafeMutablePointer<CChar>?] = entries.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        let variables = pointers.withUnsafeMutableBufferPointer { HKQ.hkqVariables(in: $0.baseAddress!) }
        #expect(variables == ["HKQ_SUBJECT": "anna", "HKQ_TOKEN": "a=b", "HKQ_EMPTY": ""])
    }
}
