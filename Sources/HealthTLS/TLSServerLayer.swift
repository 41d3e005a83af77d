import HealthPosix

/// The server side of TLS as a ``StreamLayer`` of one connection: ciphertext from the socket is fed to a
/// ``TLSEngine`` over memory BIOs, and the handler reads and writes plaintext, so the event loop stays
/// non-blocking and the protocol code never hears of TLS.
///
/// A client that starts with anything but a TLS record (a plaintext client on the TLS port) gets
/// `plaintextRefusal` in clear (an error frame saying so) and the connection closes.
///
/// Threading: loop-confined like its connection.
public final class TLSServerLayer: StreamLayer {
    private let engine: TLSEngine
    private let plaintextRefusal: [UInt8]
    /// Plaintext the handler wrote before the handshake finished, sent once it has.
    private var early: [UInt8] = []
    private var failed = false
    /// Called once the handshake finished, with the protocol version (e.g. `TLSv1.3`), for logs.
    private let onEstablished: ((String) -> Void)?

    /// A layer for one connection of `context`.
    public init(context: TLSContext, plaintextRefusal: [UInt8], onEstablished: ((String) -> Void)? = nil)
        throws(TLSError)
    {
        engine = try TLSEngine(context: context)
        self.plaintextRefusal = plaintextRefusal
        self.onEstablished = onEstablished
    }

    public func received(_ bytes: UnsafeRawBufferPointer, into output: inout StreamLayerOutput) {
        guard !failed, !bytes.isEmpty else { return }
        if engine.firstByte == nil, bytes[0] != 0x16 {
            failed = true
            output.forPeer = plaintextRefusal
            output.failure = "a plaintext client on the TLS port (its first byte is \(bytes[0]), not a TLS hello)"
            return
        }
        engine.feed(bytes)
        do {
            if !engine.isEstablished {
                guard try engine.handshake() else {
                    engine.takeOutput(appendingTo: &output.forPeer)
                    return
                }
                onEstablished?(engine.protocolVersion)
                if !early.isEmpty {
                    try engine.write(early)
                    early = []
                }
            }
            if try !engine.read(appendingTo: &output.forHandler) {
                // close_notify: the client is done; its TCP close follows.
                failed = true
            }
        } catch {
            failed = true
            output.failure = error.message
        }
        engine.takeOutput(appendingTo: &output.forPeer)
    }

    public func send(_ bytes: UnsafeRawBufferPointer, into output: inout StreamLayerOutput) {
        guard !failed else { return }
        guard engine.isEstablished else {
            early.append(contentsOf: bytes)
            return
        }
        do {
            try engine.write(bytes)
        } catch {
            failed = true
            output.failure = error.message
        }
        engine.takeOutput(appendingTo: &output.forPeer)
    }

    public func finish(into output: inout StreamLayerOutput) {
        guard !failed else { return }
        engine.close()
        engine.takeOutput(appendingTo: &output.forPeer)
    }
}
