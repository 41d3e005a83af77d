import Foundation
import TestSupport
import Testing

/// schemathesis (PyPI; `.ci/run` installs it) against a live hkd with data: it generates requests from
/// Protocol/openapi.yaml (its examples, the coverage of each parameter's edges, then seeded random ones, valid and
/// not) and fails on any 5xx and any response the document does not describe. Bounded and deterministic: a fixed
/// seed, one worker, at most ``examples`` random cases per operation (about 30 s on a debug build), and a hard
/// ``deadline``.
@Suite("schemathesis against the HTTP API")
struct SchemathesisTests {
    /// Random cases per operation in the fuzzing phase.
    static let examples = 30
    /// The run is killed after this long (a hang would be a finding of its own).
    static let deadline = 180

    @Test("no server error and no response outside Protocol/openapi.yaml for schemathesis's generated requests")
    func noServerErrorsOrSchemaViolations() async throws {
        let (hkd, port) = try await HTTPAPITests.server()
        let anna = HKQBinaryTests.anna(at: hkd)
        #expect(try await HKQBinaryTests.hkq(anna + ["insert", "-"], input: HTTPAPITests.walk).status == 0)
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Protocol/openapi.yaml").path
        // Run where its files (if any) go away with the test.
        let scratch = try TestDirectory(prefix: "schemathesis")
        let outcome = try await runChild(
            "/usr/bin/env",
            [
                "timeout", String(Self.deadline), "python3", "-c",
                "import sys; from schemathesis.cli import schemathesis; "
                    + "schemathesis.main(args=sys.argv[1:], prog_name='schemathesis')",
                "run", document, "--url", "http://127.0.0.1:\(port)", "--header",
                "Authorization: Bearer \(hkd.token)", "--seed", String(TestSeed.value(34)), "--workers", "1",
                "--max-examples", String(Self.examples), "--phases", "examples,coverage,fuzzing",
                "--checks",
                "not_a_server_error,response_schema_conformance,content_type_conformance,status_code_conformance,"
                    + "response_headers_conformance",
                "--generation-database", "none", "--no-color", "--output-sanitize", "true",
            ], environment: ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1"]) { $1 },
            currentDirectory: scratch.path)
        #expect(outcome.status == 0, "schemathesis found problems:\n\(outcome.output.suffix(6000))\n\(outcome.errors)")
        #expect(outcome.output.contains(" passed"), "\(outcome.output.suffix(2000))")
        await hkd.stop()
    }
}
