import HKQKit
import HealthModel

/// One resource of the HTTP API and the hkq command that answers it: `GET /v1/subjects/{subject}/statistics`
/// runs `hkq --subject SUBJECT stats TYPE …`. Query parameters are hkq's options by name (`tz=Europe/Paris` is
/// `--tz Europe/Paris`; a parameter without a value is a switch), except ``positional`` ones, which fill the
/// command's arguments in order after the path's own (`{workout}`). A read refuses the options that would change
/// data (``refused``); the writes are their own routes (`POST`, `PUT`, `DELETE`).
struct APIRoute: Sendable {
    /// `GET` for reads; `POST`, `PUT` or `DELETE` for writes (a `POST` body is the command's standard input).
    var method = "GET"
    /// The path under `/v1`: `{subject}` stands for the subject, any other `{name}` for a positional argument.
    let path: [String]
    /// The hkq command words.
    let command: [String]
    /// Query parameters that are the command's positional arguments, in order; each is required (a repeated
    /// one gives several arguments).
    let positional: [String]
    /// Options of the command that write, refused on a read.
    var refused: Set<String> = []
    /// Options the request must give (`priority` to set an order).
    var required: [String] = []
    /// Whether every parameter is a `name=value` argument of the command instead of an option
    /// (`characteristics set dateOfBirth=1984-05-01`).
    var parametersAsPairs = false
    /// Whether the command prints CSV; when not, the answer is its JSON whatever `Accept` asks.
    var printsCSV = true
    /// A switch of the command that prints a document of another media type instead of rows (`gpx`: GPX 1.1),
    /// asked for by that parameter or by `Accept`, and answered with that type.
    var document: (option: String, mediaType: String)?

    static let all: [APIRoute] = [
        APIRoute(path: ["server"], command: ["server-info"], positional: []),
        APIRoute(path: ["types"], command: ["types"], positional: []),
        APIRoute(path: ["units", "convert"], command: ["units", "convert"], positional: ["value", "from", "to"]),
        APIRoute(path: ["auth", "status"], command: ["auth", "status"], positional: ["type"]),
        APIRoute(path: ["subjects", "{subject}", "samples"], command: ["samples"], positional: ["type"]),
        APIRoute(
            method: "POST", path: ["subjects", "{subject}", "samples"], command: ["insert", "-"], positional: []),
        APIRoute(
            method: "DELETE", path: ["subjects", "{subject}", "samples"], command: ["delete"], positional: ["type"],
            printsCSV: false),
        APIRoute(path: ["subjects", "{subject}", "statistics"], command: ["stats"], positional: ["type"]),
        APIRoute(path: ["subjects", "{subject}", "collection"], command: ["collection"], positional: ["type"]),
        APIRoute(path: ["subjects", "{subject}", "changes"], command: ["changes"], positional: ["type"]),
        APIRoute(path: ["subjects", "{subject}", "sleep"], command: ["sleep"], positional: []),
        APIRoute(path: ["subjects", "{subject}", "workouts"], command: ["workouts"], positional: []),
        APIRoute(
            path: ["subjects", "{subject}", "workouts", "{workout}", "route"], command: ["route"], positional: [],
            document: ("gpx", "application/gpx+xml")),
        APIRoute(path: ["subjects", "{subject}", "characteristics"], command: ["characteristics"], positional: []),
        APIRoute(
            method: "PUT", path: ["subjects", "{subject}", "characteristics"], command: ["characteristics", "set"],
            positional: [], parametersAsPairs: true),
        APIRoute(path: ["subjects", "{subject}", "activity"], command: ["activity"], positional: []),
        APIRoute(
            path: ["subjects", "{subject}", "sources"], command: ["sources"], positional: ["type"],
            refused: ["priority", "allow-unseen"]),
        APIRoute(
            method: "PUT", path: ["subjects", "{subject}", "sources"], command: ["sources"], positional: ["type"],
            required: ["priority"]),
    ]

    /// hkq's options that choose where and how it connects and prints: the request decides those (`no-pager`:
    /// a body is never paged).
    static let reserved: Set<String> = [
        "server", "subject", "token", "token-file", "format", "tls", "tls-ca", "tls-fingerprint", "tls-cert",
        "tls-key", "retry-for", "idempotency-key", "no-pager",
    ]

    /// What a request's path names: its route, the subject, and the values of the path's other placeholders.
    struct Match {
        let route: APIRoute
        let subject: String?
        let pathArguments: [String]
    }

    /// The route for a path's segments (after `/`) and a method (`HEAD` as `GET`), if one serves it; `nil`
    /// when none does, or the methods of the path when only the method is wrong.
    static func match(_ segments: [String], method: String) -> Result<Match, MethodNotAllowed>? {
        let candidates = matches(segments)
        guard !candidates.isEmpty else { return nil }
        let wanted = method == "HEAD" ? "GET" : method
        if let match = candidates.first(where: { $0.route.method == wanted }) { return .success(match) }
        return .failure(MethodNotAllowed(allowed: candidates.map(\.route.method)))
    }

    /// The methods a path is served with, when a request used another.
    struct MethodNotAllowed: Error {
        let allowed: [String]
    }

    /// Every route serving a path's segments.
    static func matches(_ segments: [String]) -> [Match] {
        guard segments.first == "v1" else { return [] }
        let rest = Array(segments.dropFirst())
        var found: [Match] = []
        for route in all where route.path.count == rest.count {
            var subject: String?
            var values: [String] = []
            let matches = zip(route.path, rest).allSatisfy { pattern, segment in
                if pattern == "{subject}" {
                    subject = segment
                } else if pattern.hasPrefix("{") {
                    values.append(segment)
                } else {
                    return pattern == segment
                }
                return true
            }
            if matches { found.append(Match(route: route, subject: subject, pathArguments: values)) }
        }
        return found
    }

    /// hkq's command line for this route: the subject and output format, the command, its positional arguments,
    /// then every other parameter as an option, and the options the request's headers give (`headers`, taken as
    /// they are). Throws a ``UsageError`` naming a missing argument or a reserved option.
    func arguments(
        _ match: Match, query: [(name: String, value: String)], headers: [(name: String, value: String)] = [],
        format: String
    ) throws(UsageError) -> [String] {
        var arguments = ["--format", format]
        if let subject = match.subject { arguments += ["--subject", subject] }
        arguments += command
        for name in required where !query.contains(where: { $0.name == name && !$0.value.isEmpty }) {
            throw UsageError("the \(name) parameter is required")
        }
        if parametersAsPairs {
            guard !query.isEmpty else { throw UsageError("name at least one parameter, as name=value") }
            return arguments + ["--"] + query.map { "\($0.name)=\($0.value)" }
        }
        for (name, value) in query where !positional.contains(name) {
            guard !Self.reserved.contains(name), !refused.contains(name), !name.hasPrefix("-"), !name.isEmpty else {
                throw UsageError("the parameter \(name) is not accepted here")
            }
            arguments.append("--" + name)
            if !value.isEmpty { arguments.append(value) }
        }
        for (name, value) in headers { arguments += ["--" + name, value] }
        // After "--" nothing is taken for an option: a value such as -40 stays an argument.
        arguments.append("--")
        arguments += match.pathArguments
        for name in positional {
            let values = query.filter { $0.name == name }.map(\.value)
            guard !values.isEmpty, values.allSatisfy({ !$0.isEmpty }) else {
                throw UsageError("the \(name) parameter is required")
            }
            arguments += values
        }
        return arguments
    }
}
