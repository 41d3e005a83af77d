import Foundation
@testable import HealthAPI
import TestSupport
import Testing

/// Protocol/openapi.yaml, the HTTP API's contract, checked by openapi-spec-validator (PyPI; `.ci/run` installs
/// it).
@Suite("OpenAPI document")
struct OpenAPITests {
    /// Protocol/openapi.yaml's path.
    static let document = TestFixtures.packageRoot.appendingPathComponent("Protocol/openapi.yaml").path

    @Test("Protocol/openapi.yaml is a valid OpenAPI 3.1 document")
    func validates() async throws {
        let document = Self.document
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

    @Test("every route's operation lists exactly the parameters the route accepts")
    func operationsListTheAcceptedParameters() async throws {
        let documented = try await OpenAPIParameters.documented(Self.document)
        let problems = APIRoute.all.flatMap {
            OpenAPIParameters.problems($0, documented: documented[OpenAPIParameters.operation($0)])
        }
        #expect(problems.isEmpty, "\n\(problems.joined(separator: "\n"))")
    }

    @Test("the parameter check names what is missing, extra, twice, wrongly required or not a switch")
    func parameterProblemsNameTheParameter() throws {
        let stats = try #require(APIRoute.all.first { $0.command == ["stats"] })
        let accepted = AcceptedParameters(stats)
        #expect(accepted.query["strict-start"] == true)
        #expect(accepted.query["tz"] == false)
        #expect(accepted.query["format"] == nil && accepted.query["server"] == nil)
        #expect(accepted.query["fields"] == nil, "stats prints no list of records, so --fields is refused")
        #expect(accepted.required == ["type"] && accepted.path == ["subject"] && accepted.headers.isEmpty)
        let sources = try #require(APIRoute.all.first { $0.command == ["sources"] && $0.method == "GET" })
        #expect(AcceptedParameters(sources).query["priority"] == nil, "refused on a read")

        var documented = [DocumentedParameter(location: "path", name: "subject", required: true)]
        documented += accepted.query.keys.sorted().map {
            DocumentedParameter(
                location: "query", name: $0, required: $0 == "type", allowsEmptyValue: accepted.query[$0]!)
        }
        #expect(OpenAPIParameters.problems(stats, documented: documented) == [])
        var broken = documented.filter { $0.name != "tz" && $0.name != "subject" }
        broken += [
            DocumentedParameter(location: "query", name: "bogus"),
            DocumentedParameter(location: "query", name: "unit"),
            DocumentedParameter(location: "header", name: "Idempotency-Key"),
        ]
        broken = broken.map { parameter in
            var parameter = parameter
            if parameter.name == "type" { parameter.required = false }
            if parameter.name == "strict-start" { parameter.allowsEmptyValue = false }
            return parameter
        }
        let operation = "GET /v1/subjects/{subject}/statistics"
        #expect(
            OpenAPIParameters.problems(stats, documented: broken) == [
                "\(operation) lacks the query parameter tz",
                "\(operation) lists the query parameter bogus, which the route does not accept",
                "\(operation) lists the query parameter unit more than once",
                "\(operation) lacks the path parameter subject",
                "\(operation) lists the header parameter Idempotency-Key, which the route does not accept",
                "\(operation) lacks allowEmptyValue on strict-start, a switch given without a value",
                "\(operation) has the query parameter type optional, but the route requires it",
            ])
        #expect(OpenAPIParameters.problems(stats, documented: nil) == ["\(operation) is not in the document"])
    }
}
