import Foundation
import TestSupport
import Testing

/// An agent package depends on hkd by path from a checkout of any folder name: `Examples/ingest-agent`'s manifest,
/// copied beside a checkout named otherwise, resolves `.product(name: "HealthClient", package: "hkd")`.
@Suite struct ExamplePackageTests {
    /// `swift package show-dependencies` in a copy of the example's manifest next to a link to this checkout
    /// named `link`; its dependency declaration changed by `edit`.
    static func resolve(link: String, edit: (String) -> String = { $0 }) async throws -> ChildOutcome {
        let scratch = try TestDirectory(prefix: "hk-example")
        let root = TestFixtures.packageRoot
        try FileManager.default.createSymbolicLink(
            atPath: scratch.appending(link), withDestinationPath: root.path)
        let agent = URL(fileURLWithPath: scratch.appending("agent"))
        try FileManager.default.copyItem(
            at: root.appendingPathComponent("Examples/ingest-agent/Sources"),
            to: agent.appendingPathComponent("Sources"))
        let manifest = try String(
            contentsOf: root.appendingPathComponent("Examples/ingest-agent/Package.swift"), encoding: .utf8)
        let moved = manifest.replacingOccurrences(of: #"path: "../..""#, with: #"path: "../\#(link)""#)
        #expect(moved != manifest, "the example names the checkout by path")
        try edit(moved).write(to: agent.appendingPathComponent("Package.swift"), atomically: false, encoding: .utf8)
        return try await runChild(
            "/usr/bin/env", ["swift", "package", "show-dependencies"], currentDirectory: agent.path)
    }

    @Test func theExampleResolvesFromACheckoutNamedOtherwise() async throws {
        let resolved = try await Self.resolve(link: "renamed-checkout")
        #expect(resolved.status == 0, "\(resolved.printed)")
        #expect(resolved.output.contains("renamed-checkout"), "\(resolved.printed)")
        // Without the package's name in the dependency, SwiftPM knows it only by the folder's name.
        let unnamed = try await Self.resolve(link: "renamed-checkout") {
            $0.replacingOccurrences(of: #".package(name: "hkd", path:"#, with: ".package(path:")
        }
        #expect(unnamed.status != 0)
        #expect(unnamed.printed.contains("unknown package 'hkd'"), "\(unnamed.printed)")
    }
}
