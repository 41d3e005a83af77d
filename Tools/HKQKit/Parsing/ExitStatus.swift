import HealthClient
import HealthModel

/// The exit statuses of hkq: one per outcome a script may want to tell apart, as psql's and gh's are. 0 and 1 as
/// every tool has them, 64 and up from BSD's sysexits.h, 2 and 3 for hkq's own answers. `hkq --help`, the man page
/// and README list them from here.
public enum ExitStatus: Int32, CaseIterable, Sendable {
    /// The command did what was asked.
    case success = 0
    /// A failure none of the other statuses names: the server failed internally, the protocol broke, a TLS mismatch.
    case failure = 1
    /// The query matched no data: a statistic over nothing, a workout without a route (HealthKit answers "no
    /// data", not zero).
    case noData = 2
    /// An import or insert stored what it could and rejected some elements or rows, each named.
    case partialImport = 3
    /// The command line was wrong: unknown command or option, missing or malformed argument (EX_USAGE).
    case usage = 64
    /// The input could not be used: a file that does not parse, a value hkq or the server refuses (an unknown
    /// type, an invalid unit or sample) (EX_DATAERR).
    case badInput = 65
    /// The server could not be reached, or stayed unavailable (busy, shutting down, storage unavailable) for the
    /// whole retry budget (EX_UNAVAILABLE).
    case unavailable = 69
    /// Authentication or authorization was refused: a missing, wrong or revoked token, a missing grant, a server
    /// or certificate that failed verification (EX_NOPERM).
    case refused = 77

    /// One line saying when hkq exits with this status, for help and the man page.
    public var meaning: String {
        switch self {
        case .success: "The command did what was asked."
        case .failure: "A failure none of the statuses below names (the server failed, a TLS mismatch)."
        case .noData: "No data: the query matched nothing (stats, route)."
        case .partialImport: "import or insert stored what it could and rejected some rows (named on stderr)."
        case .usage: "The command line was wrong (EX_USAGE)."
        case .badInput: "Bad input: a file that does not parse, a value hkq or the server refuses (EX_DATAERR)."
        case .unavailable: "The server was unreachable or unavailable for the whole retry budget (EX_UNAVAILABLE)."
        case .refused: "Authentication or authorization refused: token, grant, certificate (EX_NOPERM)."
        }
    }

    /// The status of a command that ended with `error`.
    public init(for error: any Error) {
        switch error {
        case is UsageError: self = .usage
        case let exit as CommandExit: self = exit.status
        case is ImportError: self = .badInput
        case let error as HealthError: self.init(for: error.code)
        case let error as HealthClientError: self.init(for: error.code)
        default: self = .failure
        }
    }

    /// The status of a command that ended with an error of `code`, by its class (Protocol/PROTOCOL.md, "Error
    /// codes"): 2xx is input refused, 3xx authentication or authorization, 4xx (retryable, so retried for the whole
    /// budget) the server unavailable. A malformed payload is input that does not parse (hkq's readers of
    /// exports and sample files name a damaged file so).
    public init(for code: ErrorCode) {
        switch code.rawValue {
        case ErrorCode.noData.rawValue: self = .noData
        case ErrorCode.malformedPayload.rawValue, 200..<300: self = .badInput
        case 300..<400: self = .refused
        case 400..<500: self = .unavailable
        default: self = .failure
        }
    }
}
