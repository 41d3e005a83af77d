import HealthClient

/// hkq's TLS options: `--tls` and the options that imply it, each with its `HKQ_*` variable.
extension GlobalOptions {
    /// The TLS options from the command line, else the environment; nil when neither asks for TLS.
    static func resolveTLS(
        options: [String: [String]], flags: Set<String>, environment: [String: String], commandPath: [String]
    ) throws -> TLSClientOptions? {
        func value(_ name: String) -> (String, origin: String)? {
            if let given = options[name]?.last { return (given, "--\(name)") }
            // Spelled out rather than with Foundation's replacingOccurrences, which every hkq command would run
            // through NSString.
            let variable = "HKQ_" + name.uppercased().replacingAll("-", with: "_")
            return environment[variable].map { ($0, variable) }
        }
        var tls = TLSClientOptions()
        tls.caFile = value("tls-ca")?.0
        tls.certificateFile = value("tls-cert")?.0
        tls.keyFile = value("tls-key")?.0
        if let (text, origin) = value("tls-fingerprint") {
            guard let fingerprint = CertificateFingerprint(text) else {
                throw UsageError(
                    "invalid SHA-256 fingerprint '\(text)' in \(origin); expected 64 hex digits, with or without colons",
                    commandPath: commandPath)
            }
            tls.fingerprint = fingerprint
        }
        if (tls.certificateFile == nil) != (tls.keyFile == nil) {
            throw UsageError("--tls-cert and --tls-key go together", commandPath: commandPath)
        }
        let asked =
            flags.contains("tls") || ["1", "true", "yes", "on"].contains(environment["HKQ_TLS"]?.lowercased() ?? "")
        return asked || tls != TLSClientOptions() ? tls : nil
    }
}
