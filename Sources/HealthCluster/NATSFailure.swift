import CNats
import HealthModel

/// A failed nats.c call as the error hkd reports: what was attempted, nats.c's status text and last error, and
/// JetStream's error code when the server sent one.
///
/// A lost or slow NATS connection, a stream without quorum and a lost lease are temporary
/// (``ErrorCode/storageUnavailable``, retrying helps); ``isWrongLastSequence`` tells the fencing refusal apart.
public struct NATSFailure: Error, CustomStringConvertible, Sendable {
    /// What hkd was doing.
    public var action: String
    /// nats.c's status (its `natsStatus` raw value).
    public var status: UInt32
    /// JetStream's API error code (0: none).
    public var jetStreamCode: UInt32
    /// nats.c's text for the status and its last error.
    public var text: String

    /// The failure of `action` with status `status` (and `errCode`); reads nats.c's last error of this thread.
    init(_ action: String, _ status: natsStatus, _ errCode: jsErrCode = jsErrCode(rawValue: 0)) {
        self.action = action
        self.status = status.rawValue
        jetStreamCode = errCode.rawValue
        var statusText = String(cString: natsStatus_GetText(status))
        var lastStatus = NATS_OK
        if let last = nats_GetLastError(&lastStatus) {
            let detail = String(cString: last)
            if !detail.isEmpty, detail != statusText { statusText += ": " + detail }
        }
        text = statusText
    }

    /// JetStream refused a publish whose expected last sequence is not the stream's (another owner appended).
    public var isWrongLastSequence: Bool { jetStreamCode == JSStreamWrongLastSequenceErr.rawValue }

    /// nats.c found nothing (a key or message that does not exist).
    public var isNotFound: Bool {
        status == NATS_NOT_FOUND.rawValue || jetStreamCode == JSNoMessageFoundErr.rawValue
    }

    public var description: String {
        jetStreamCode == 0 ? "\(action): \(text)" : "\(action): \(text) (JetStream error \(jetStreamCode))"
    }

    /// The error a client sees: retryable ``ErrorCode/storageUnavailable``.
    public var healthError: HealthError {
        HealthError(.storageUnavailable, "the cluster's NATS JetStream is unavailable: \(description)")
    }
}

/// Throws ``NATSFailure`` unless `status` is `NATS_OK`.
@inline(__always)
func check(_ status: natsStatus, _ action: @autoclosure () -> String, _ errCode: jsErrCode = jsErrCode(rawValue: 0))
    throws(NATSFailure)
{
    if status != NATS_OK { throw NATSFailure(action(), status, errCode) }
}
