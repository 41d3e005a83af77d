import HealthClient
import HealthPosix

/// A server address `host:port`; IPv6 hosts are written in brackets, `[::1]:7420`.
public struct ServerAddress: Hashable, Sendable, CustomStringConvertible {
    /// Host name or IP address (without brackets).
    public var host: String
    /// TCP port.
    public var port: UInt16

    /// The address hkq uses when neither `--server` nor `HKQ_SERVER` is given.
    public static let defaultAddress = ServerAddress(host: "127.0.0.1", port: 7420)

    /// An address from its parts.
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`, `[v6]:port` or a host alone (the default port, 7420); `nil` when the host is empty or
    /// the port is not 1–65535.
    public init?(parsing text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") { return nil }
        } else {
            // A host alone: the default port.
            host = text[...]
            portText = "\(ServerAddress.defaultAddress.port)"
        }
        guard !host.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = UInt16(portText), port > 0
        else {
            return nil
        }
        self.init(host: String(host), port: port)
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// The options every command accepts, before or after its name, with their environment defaults.
public struct GlobalOptions: Sendable, Equatable {
    /// `--server HOST:PORT`, else `HKQ_SERVER`, else 127.0.0.1:7420.
    public var server: ServerAddress
    /// `--subject S`, else `HKQ_SUBJECT`, else `me`.
    public var subject: String
    /// `--token T`, else the first line of `--token-file PATH`, else `HKQ_TOKEN`, else that of `HKQ_TOKEN_FILE`,
    /// else none.
    public var token: String?
    /// `--format table|json|csv|chart`, else `table`; `json` for `--format ndjson` (with ``jsonLines``).
    public var format: OutputFormat
    /// `--format ndjson`: a listing's JSON objects one a line, without the array around them (commands whose
    /// ``CommandSpec/printsJSONLines`` is set).
    public var jsonLines = false
    /// `--time-format rfc3339|epoch-ms|epoch-us`, else `rfc3339`: how JSON and CSV write instants.
    public var timeFormat: TimeFormat
    /// `--tls` and its options (or their `HKQ_TLS*` variables); nil: plaintext.
    public var tls: TLSClientOptions?
    /// `--fields a,b,c`: the keys and columns to print, in that order; nil: all of them.
    public var fields: FieldSelection?
    /// `--no-pager`: print a long listing on a terminal straight to it (``Pager``).
    public var noPager = false
    /// What hkq tells the user on stderr before the command runs (a token file other users can read).
    public var warnings: [String] = []
    /// `--retry-for SECONDS`, else `HKQ_RETRY_FOR`, else 30 s: how long a command keeps retrying a server that
    /// cannot be reached or is unavailable (``RetryPolicy/budget``); zero fails at the first refusal.
    public var retryFor: Duration = RetryPolicy.standard.budget

    /// Global options from their parts.
    public init(
        server: ServerAddress, subject: String, token: String?, format: OutputFormat, timeFormat: TimeFormat = .rfc3339,
        tls: TLSClientOptions? = nil, fields: FieldSelection? = nil
    ) {
        self.tls = tls
        self.fields = fields
        self.server = server
        self.subject = subject
        self.token = token
        self.format = format
        self.timeFormat = timeFormat
    }

    /// The specs of the global options, as help lists them.
    public static let specs: [OptionSpec] = [
        .option("server", value: "host:port", help: "The hkd server (default: $HKQ_SERVER, else 127.0.0.1:7420)."),
        .option("subject", value: "subject", help: "The person whose data to use (default: $HKQ_SUBJECT, else me)."),
        .option("token", value: "token", help: "The access token (default: $HKQ_TOKEN)."),
        .option(
            "token-file", value: "path",
            help:
                "Read the access token from this file, keeping it out of ps and shell history (default: $HKQ_TOKEN_FILE)."
        ),
        .option(
            "format", value: "format",
            help: "Output format: table, json, csv, ndjson (listings: one JSON object a line) or chart (collection "
                + "and sleep, fitted to $COLUMNS or the terminal; default: table).",
            allowedValues: OutputFormat.allCases.map(\.rawValue) + ["ndjson"]),
        .option(
            "time-format", value: "style",
            help:
                "Instants in JSON and CSV: rfc3339 (with the zone's offset), epoch-ms or epoch-us (default: rfc3339).",
            allowedValues: TimeFormat.allCases.map(\.rawValue)),
        .option(
            "fields", value: "a,b,c",
            help:
                "Print only these JSON keys and CSV/table columns, in this order (commands that print lists of "
                + "records; an unknown name lists the fields)."),
        .flag(
            "no-pager",
            help:
                "Print a listing longer than the terminal straight to it instead of through $HKQ_PAGER, else "
                + "$PAGER, else less (never paged when output is not a terminal; a pager of '' or cat also turns "
                + "paging off)."),
        .flag("tls", help: "Connect with TLS, checking the server's certificate and name (default: $HKQ_TLS)."),
        .option(
            "tls-ca", value: "path",
            help:
                "Trust the authorities in this PEM file instead of the system's; implies --tls (default: $HKQ_TLS_CA)."),
        .option(
            "tls-fingerprint", value: "sha256",
            help:
                "Accept only the server certificate with this SHA-256 fingerprint (hkd logs it; for --tls auto's "
                + "self-signed one); implies --tls (default: $HKQ_TLS_FINGERPRINT)."),
        .option(
            "tls-cert", value: "path",
            help: "Client certificate (PEM) for servers that require one; implies --tls (default: $HKQ_TLS_CERT)."),
        .option("tls-key", value: "path", help: "The client certificate's private key (default: $HKQ_TLS_KEY)."),
        .option(
            "retry-for", value: "seconds",
            help:
                "Keep retrying a server that cannot be reached or is unavailable (restarting, busy) for this long, "
                + "then exit \(ExitStatus.unavailable.rawValue); 0 fails at once (default: $HKQ_RETRY_FOR, else "
                + "\(RetryPolicy.standard.budget.components.seconds))."),
    ]

    /// Resolves the options: the command line first, then the environment, then the defaults.
    ///
    /// Throws ``UsageError`` for a malformed server address or an empty subject.
    public static func resolve(
        options: [String: [String]], flags: Set<String> = [], environment: [String: String],
        commandPath: [String] = []
    ) throws -> GlobalOptions {
        let serverText = options["server"]?.last ?? environment["HKQ_SERVER"]
        var server = ServerAddress.defaultAddress
        if let serverText {
            guard let parsed = ServerAddress(parsing: serverText) else {
                let origin = options["server"] != nil ? "--server" : "HKQ_SERVER"
                throw UsageError(
                    "invalid server address '\(serverText)' in \(origin); expected host, host:port or [v6]:port",
                    commandPath: commandPath)
            }
            server = parsed
        }
        let subject = options["subject"]?.last ?? environment["HKQ_SUBJECT"] ?? "me"
        if subject.isEmpty { throw UsageError("the subject is empty", commandPath: commandPath) }
        var warnings: [String] = []
        func tokenFile(_ path: String, origin: String) throws -> String {
            if let warning = tokenFileWarning(path, origin: origin) { warnings.append(warning) }
            return try readTokenFile(path, origin: origin, commandPath)
        }
        let token =
            try options["token"]?.last
            ?? options["token-file"]?.last.map { try tokenFile($0, origin: "--token-file") }
            ?? environment["HKQ_TOKEN"]
            ?? environment["HKQ_TOKEN_FILE"].map { try tokenFile($0, origin: "HKQ_TOKEN_FILE") }
        let jsonLines = options["format"]?.last == "ndjson"
        let format = jsonLines ? .json : options["format"]?.last.flatMap(OutputFormat.init(rawValue:)) ?? .table
        let timeFormat = options["time-format"]?.last.flatMap(TimeFormat.init(rawValue:)) ?? .rfc3339
        let tls = try resolveTLS(options: options, flags: flags, environment: environment, commandPath: commandPath)
        let fields = try options["fields"]?.last.map { try FieldSelection(parsing: $0, commandPath: commandPath) }
        var globals = GlobalOptions(
            server: server, subject: subject, token: token, format: format, timeFormat: timeFormat, tls: tls,
            fields: fields)
        globals.warnings = warnings
        globals.jsonLines = jsonLines
        globals.noPager = flags.contains("no-pager")
        if let text = options["retry-for"]?.last ?? environment["HKQ_RETRY_FOR"] {
            guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= 86_400 else {
                let origin = options["retry-for"] != nil ? "--retry-for" : "HKQ_RETRY_FOR"
                throw UsageError(
                    "invalid value '\(text)' for \(origin); expected seconds from 0 to 86400", commandPath: commandPath)
            }
            globals.retryFor = .milliseconds(Int64((seconds * 1000).rounded()))
        }
        return globals
    }

    /// A warning when other users may read the token file at `path` (any of the mode bits 077), as hkd refuses
    /// an `admin.token` so; nil otherwise, also when its mode cannot be read.
    static func tokenFileWarning(_ path: String, origin: String) -> String? {
        guard let mode = try? FileSystem.permissions(of: path), mode & 0o077 != 0 else { return nil }
        return "the token file '\(path)' (\(origin)) is readable by other users (mode \(String(mode, radix: 8))); "
            + "run chmod 600 \(path)"
    }

    /// The first line of a token file, trimmed; a missing, unreadable or empty file is a usage error naming it.
    private static func readTokenFile(_ path: String, origin: String, _ commandPath: [String]) throws -> String {
        guard let token = LocalToken.read(path) else {
            throw UsageError(
                "cannot read a token from '\(path)' (\(origin)): missing, unreadable or empty", commandPath: commandPath
            )
        }
        return token
    }
}
