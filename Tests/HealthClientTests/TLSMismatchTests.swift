import HealthPosix
import Synchronization
import Testing

@testable import HealthClient

/// A stream whose peer answers anything with `reply`, then closes.
final class CannedStream: ByteStream {
    private let reply: Mutex<[UInt8]>

    init(_ reply: [UInt8]) { self.reply = Mutex(reply) }

    func read(maxBytes: Int, timeout: Duration?) throws -> [UInt8] {
        reply.withLock { reply in
            defer { reply = [] }
            return reply
        }
    }

    func write(_ bytes: [UInt8], timeout: Duration?) throws {}
    func shutdown() {}
    func close() {}
}

@Suite("a plaintext client meeting TLS")
struct TLSMismatchTests {
    @Test("a TLS record (an alert, a hello) in answer to the plaintext hello is tlsRequired: use --tls")
    func tlsRecordBack() {
        let records: [[UInt8]] = [[0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46], [0x16, 0x03, 0x03, 0x00, 0x01, 0x02]]
        for record in records {
            #expect {
                _ = try HealthConnection.handshake(CannedStream(record), ClientConfiguration(port: 7420))
            } throws: { error in
                guard let error = error as? HealthClientError else { return false }
                return error.code == .tlsRequired && error.origin == .local && error.message.contains("speaks TLS")
                    && error.message.contains("--tls") && !error.isRetryable
            }
        }
    }
}
