import Foundation
import HKQKit
@testable import HealthAPI
import HealthModel
import TestSupport

/// One parameter of an OpenAPI operation, `$ref`s resolved: where it goes and how it is given.
struct DocumentedParameter: Equatable, Sendable {
    /// `query`, `path` or `header`.
    var location: String
    var name: String
    var required = false
    /// Whether it may be sent without a value (a switch).
    var allowsEmptyValue = false
}

/// What a route of the HTTP API takes, read from the route and its hkq command's spec: the parameters the
/// contract must list for it.
struct AcceptedParameters: Equatable, Sendable {
    /// Query parameters by name, with whether each is a switch (an hkq flag).
    var query: [String: Bool]
    /// Query parameters the request must give.
    var required: Set<String>
    /// The path's placeholders (`subject`, `workout`).
    var path: Set<String>
    /// Request headers the route reads.
    var headers: Set<String>

    /// The parameters `route` accepts: its command's options and the global options a request may choose (minus
    /// ``APIRoute/reserved`` and the route's `refused`; `fields` only for commands that print lists of records),
    /// its positional parameters, or for a route of `name=value` pairs the characteristics' keys.
    init(_ route: APIRoute, table: CommandTable = CommandTable(commands: HKQ.commands)) {
        path = Set(route.path.filter { $0.hasPrefix("{") }.map { String($0.dropFirst().dropLast()) })
        headers = route.method == "GET" ? [] : ["Idempotency-Key"]
        required = Set(route.positional + route.required)
        guard !route.parametersAsPairs else {
            query = Dictionary(uniqueKeysWithValues: CharacteristicKey.allCases.map { ($0.rawValue, false) })
            return
        }
        // The longest prefix of the command's words naming a command (`insert -` is `insert` reading stdin).
        let entry = table.entries.filter { route.command.starts(with: $0.path) }.max { $0.path.count < $1.path.count }
        guard let spec = entry?.spec else {
            query = [:]
            return
        }
        let globals = GlobalOptions.specs.filter { $0.name != "fields" || spec.selectsFields }
        query = [:]
        for option in spec.options + globals
        where !APIRoute.reserved.contains(option.name) && !route.refused.contains(option.name) {
            query[option.name] = option.isFlag
        }
        for name in route.positional { query[name] = false }
    }
}

/// Protocol/openapi.yaml's operations compared with ``APIRoute/all``.
enum OpenAPIParameters {
    /// Each operation's parameters by `METHOD /path` (`GET /v1/types`), path-level ones included, read from the
    /// document with PyYAML.
    static func documented(_ document: String) async throws -> [String: [DocumentedParameter]] {
        let script = """
            import json, sys, yaml
            doc = yaml.safe_load(open(sys.argv[1]))
            def resolve(p):
                while "$ref" in p:
                    node = doc
                    for part in p["$ref"].lstrip("#/").split("/"):
                        node = node[part]
                    p = node
                return p
            out = {}
            for path, item in doc["paths"].items():
                shared = [resolve(p) for p in item.get("parameters", [])]
                for method in ("get", "put", "post", "delete", "patch"):
                    if method in item:
                        own = [resolve(p) for p in item[method].get("parameters", [])]
                        out[method.upper() + " " + path] = [
                            {"in": p["in"], "name": p["name"], "required": p.get("required", False),
                             "allowEmptyValue": p.get("allowEmptyValue", False)} for p in shared + own]
            print(json.dumps(out))
            """
        let outcome = try await runChild("/usr/bin/env", ["python3", "-c", script, document])
        guard outcome.status == 0,
            let json = try JSONSerialization.jsonObject(with: Data(outcome.output.utf8)) as? [String: [[String: Any]]]
        else { throw DocumentError(message: "could not read \(document): \(outcome.errors)") }
        return json.mapValues { parameters in
            parameters.map {
                DocumentedParameter(
                    location: $0["in"] as? String ?? "", name: $0["name"] as? String ?? "",
                    required: $0["required"] as? Bool ?? false,
                    allowsEmptyValue: $0["allowEmptyValue"] as? Bool ?? false)
            }
        }
    }

    /// A document that could not be read.
    struct DocumentError: Error {
        let message: String
    }

    /// The operation's key for `route`: `GET /v1/subjects/{subject}/samples`.
    static func operation(_ route: APIRoute) -> String {
        route.method + " /v1/" + route.path.joined(separator: "/")
    }

    /// What the document gets wrong about `route`, one sentence each, naming the parameter: missing, not
    /// accepted, listed twice, required or not as the route has it, a switch not marked `allowEmptyValue`.
    static func problems(_ route: APIRoute, documented: [DocumentedParameter]?) -> [String] {
        let operation = operation(route)
        guard let documented else { return ["\(operation) is not in the document"] }
        let accepted = AcceptedParameters(route)
        var problems: [String] = []
        func compare(_ location: String, accepted: Set<String>) {
            let listed = documented.filter { $0.location == location }.map(\.name)
            for name in accepted.subtracting(listed).sorted() {
                problems.append("\(operation) lacks the \(location) parameter \(name)")
            }
            for name in Set(listed).subtracting(accepted).sorted() {
                problems.append("\(operation) lists the \(location) parameter \(name), which the route does not accept")
            }
            for name in Set(listed).sorted() where listed.filter({ $0 == name }).count > 1 {
                problems.append("\(operation) lists the \(location) parameter \(name) more than once")
            }
        }
        compare("query", accepted: Set(accepted.query.keys))
        compare("path", accepted: accepted.path)
        compare("header", accepted: accepted.headers)
        for parameter in documented where parameter.location == "query" {
            guard let isFlag = accepted.query[parameter.name] else { continue }
            let required = accepted.required.contains(parameter.name)
            if parameter.required != required {
                problems.append(
                    "\(operation) has the query parameter \(parameter.name) "
                        + (required ? "optional, but the route requires it" : "required, but the route does not"))
            }
            if isFlag && !parameter.allowsEmptyValue {
                problems.append(
                    "\(operation) lacks allowEmptyValue on \(parameter.name), a switch given without a value")
            }
        }
        return problems
    }
}
