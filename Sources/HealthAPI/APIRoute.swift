import HKQKit
import HealthModel

/// One resource of the HTTP API and the hkq command that answers it: `GET /v1/subjects/{subject}/statistics`
/// runs `hkq --subject SUBJECT stats TYPE …`. Query parameters are hkq's options by name (`tz=Europe/Paris` is
/// `--tz Europe/Paris`; a parameter without a value is a switch), except ``positional`` ones, which fill the
/// command's arguments in order.
struct APIRoute: Sendable {
    /// The path under `/v1`, `{subject}` standing for a subject.
    let path: [String]
    /// The hkq command words.
    let command: [String]
    /// Query parameters that are the command's positional arguments, in order; each is required.
    let positional: [String]

    static let all: [APIRoute] = [
        APIRoute(path: ["server"], command: ["server-info"], positional: []),
        APIRoute(path: ["types"], command: ["types"], positional: []),
        APIRoute(path: ["subjects", "{subject}", "samples"], command: ["samples"], positional: ["type"]),
        APIRoute(path: ["subjects", "{subject}", "statistics"], command: ["stats"], positional: ["type"]),
        APIRoute(path: ["subjects", "{subject}", "collection"], command: ["collection"], positional: ["type"]),
    ]

    /// hkq's options that choose where and how it connects and prints: the request decides those.
    static let reserved: Set<String> = [
        "server", "subject", "token", "token-file", "format", "tls", "tls-ca", "tls-fingerprint", "tls-cert",
        "tls-key", "retry-for",
    ]

    /// The route for a path's segments (after `/`), and the subject it names, if it names one.
    static func match(_ segments: [String]) -> (APIRoute, String?)? {
        guard segments.first == "v1" else { return nil }
        let rest = Array(segments.dropFirst())
        for route in all where route.path.count == rest.count {
            var subject: String?
            let matches = zip(route.path, rest).allSatisfy { pattern, segment in
                if pattern == "{subject}" {
                    subject = segment
                    return true
                }
                return pattern == segment
            }
            if matches { return (route, subject) }
        }
        return nil
    }

    /// hkq's command line for this route: the subject and output format, the command, its positional arguments,
    /// then every other parameter as an option. Throws a ``UsageError`` naming a missing argument or a reserved
    /// option.
    func arguments(subject: String?, query: [(name: String, value: String)], format: OutputFormat) throws(UsageError)
        -> [String]
    {
        var arguments = ["--format", format.rawValue]
        if let subject { arguments += ["--subject", subject] }
        arguments += command
        for name in positional {
            guard let value = query.first(where: { $0.name == name })?.value, !value.isEmpty else {
                throw UsageError("the \(name) parameter is required")
            }
            arguments.append(value)
        }
        for (name, value) in query where !positional.contains(name) {
            guard !Self.reserved.contains(name), !name.hasPrefix("-"), !name.isEmpty else {
                throw UsageError("the parameter \(name) is not accepted here")
            }
            arguments.append("--" + name)
            if !value.isEmpty { arguments.append(value) }
        }
        return arguments
    }
}
