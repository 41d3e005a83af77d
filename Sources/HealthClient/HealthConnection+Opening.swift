import HealthModel
import HealthPosix
import HealthTLS
import HealthWire

extension HealthConnection {
    /// Connects and performs the handshake. Blocks the calling thread for at most the connect timeout plus one
    /// round trip; `HealthClient` calls it off the cooperative pool.
    ///
    /// `readingInPlace` defers the reader thread: requests sent from the calling thread then read their replies
    /// on it (blocking it while they wait). Only for a thread that serves nothing else, never one of Swift's
    /// cooperative pool.
    package static func open(_ configuration: ClientConfiguration, readingInPlace: Bool = false)
        throws(HealthClientError) -> HealthConnection
    {
        let tcp: ClientSocket
        do {
            tcp = try ClientSocket.connect(
                host: configuration.host, port: configuration.port, timeout: configuration.connectTimeout)
        } catch {
            throw .local(
                .connectionLost, "cannot connect to \(configuration.host):\(configuration.port): \(error.message)")
        }
        let socket: any ByteStream
        do {
            socket = try secure(tcp, configuration)
        } catch {
            tcp.close()
            throw error
        }
        do {
            let machine = try handshake(socket, configuration)
            let connection = HealthConnection(
                socket: socket, machine: machine, configuration: configuration,
                inPlaceThread: readingInPlace ? PosixThread.currentID : nil)
            if !readingInPlace, connection.claimReading(for: .thread) { try connection.startReader() }
            return connection
        } catch {
            socket.close()
            throw error
        }
    }

    /// The TCP connection itself, or with `configuration.tls` a TLS stream over it once the TLS handshake
    /// passed every check.
    private static func secure(_ tcp: ClientSocket, _ configuration: ClientConfiguration)
        throws(HealthClientError) -> any ByteStream
    {
        guard let options = configuration.tls else { return tcp }
        do {
            let context = try TLSContext.client(options)
            return try TLSClientStream.connect(
                over: tcp, context: context, host: configuration.host, timeout: configuration.connectTimeout)
        } catch let error as TLSError {
            // A server that answered TLS in plaintext with an error frame (tlsUnavailable, tooManyConnections …)
            // said why: its error, retryable or not, is the answer.
            if let refusal = Self.errorFrame(in: error.plaintextReply) { throw HealthClientError(.server, refusal) }
            throw HealthClientError(tlsError: error, configuration)
        } catch let error as SystemError {
            throw .local(
                error.isTimeout ? .timedOut : .connectionLost,
                "TLS handshake with \(configuration.host):\(configuration.port) failed: \(error.message)")
        } catch {
            throw .local(.internalError, "TLS handshake failed: \(error)")
        }
    }

    /// The error an `error` frame at the start of `bytes` carries, if they hold one whole.
    private static func errorFrame(in bytes: [UInt8]) -> HealthError? {
        var decoder = FrameDecoder(limits: .standard)
        decoder.append(bytes)
        guard let frame = try? decoder.next(), case .error(let reply)? = try? Message.decode(frame) else { return nil }
        return reply.healthError
    }

    /// Runs the machine's handshake over `socket` (hello, then with a token challenge → proof, then welcome, whose
    /// server signature must be right before anything else is sent: Protocol/PROTOCOL.md "Authentication"), each
    /// read and write within the connect timeout. Returns the machine, established. The token never leaves this
    /// side.
    static func handshake(_ socket: any ByteStream, _ configuration: ClientConfiguration)
        throws(HealthClientError) -> Machine
    {
        let timeout = configuration.connectTimeout
        let encoder = FrameEncoder()
        do {
            let nonce = configuration.token.isEmpty ? [] : try SecureRandom.bytes(TokenAuthentication.nonceBytes)
            var machine = Machine(configuration, nonce: nonce)
            var actions = machine.connected()
            while true {
                for action in actions {
                    switch action {
                    case .send(let message, let id), .sendControl(let message, let id):
                        try socket.write(encoder.encode(message.frame(requestID: id)), timeout: timeout)
                    case .close(let error):
                        throw error
                    case .succeed, .fail, .update, .end:
                        break
                    }
                }
                if machine.welcome != nil { return machine }
                let bytes = try socket.read(maxBytes: 64 << 10, timeout: timeout)
                actions = bytes.isEmpty ? machine.peerClosed() : machine.received(bytes, now: .now)
            }
        } catch let error as HealthClientError {
            throw error
        } catch let error as TLSError {
            throw HealthClientError(tlsError: error, configuration)
        } catch let error as SystemError {
            throw .local(
                error.isTimeout ? .timedOut : .connectionLost,
                "handshake with \(configuration.host):\(configuration.port) failed: \(error.message)")
        } catch {
            throw .local(.internalError, "handshake failed: \(error)")
        }
    }
}
