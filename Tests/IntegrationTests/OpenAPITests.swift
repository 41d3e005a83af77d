import Foundation
import TestSupport
import Testing

/// Protocol/openapi.yaml, the HTTP API's contract, checked by openapi-spec-validator (PyPI; `.ci/run` installs
/// it).
@Suite("OpenAPI document")
struct OpenAPITests {
    @Test("Protocol/openapi.yaml is a valid OpenAPI 3.1 document")
    func validates() async throws {
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Protocol/openapi.yaml").path
        let script = """
            import sys, yaml
            from openapi_spec_validator import validate
            validate(yaml.safe_load(open(sys.argv[1])))
            print("valid")
            """
        let outcome = try await runChild("/usr/bin/env", ["python3", "-c", script, document])
        #expect(outcome.status == 0, "\(outcome.errors)")
        #expect(outcome.output == "valid\n")
    }
}
