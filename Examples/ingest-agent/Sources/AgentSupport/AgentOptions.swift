import HealthClient

/// The command line shared by the two examples: `--server HOST:PORT`, `--subject`, `--token`, `--once`, a file.
public struct AgentOptions {
    public var server = "127.0.0.1:7420"
    public var subject = "anna"
    public var token = ""
    public var once = false
    public var file: String?

    public init(_ arguments: some Sequence<String>) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--server": server = iterator.next() ?? server
            case "--subject": subject = iterator.next() ?? subject
            case "--token": token = iterator.next() ?? token
            case "--once": once = true
            default: file = argument
            }
        }
    }

    /// The client configuration for `--server` and `--token`.
    public func configuration(name: String) -> ClientConfiguration {
        let parts = server.split(separator: ":")
        return ClientConfiguration(
            host: parts.first.map(String.init) ?? "127.0.0.1", port: parts.count > 1 ? Int(parts[1]) ?? 7420 : 7420,
            token: token, clientName: name)
    }
}
