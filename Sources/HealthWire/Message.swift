import HealthCodec
import HealthModel

extension Message {
    /// The message `body` in its case.
    public init(_ body: some WireMessage) {
        guard let message = MessageRegistration[type(of: body).kind].wrap(body) else {
            preconditionFailure("\(type(of: body)) claims kind \(type(of: body).kind), registered to another type")
        }
        self = message
    }

    /// The kind of the wrapped message.
    public var kind: MessageKind { type(of: body).kind }

    /// A frame carrying this message.
    public func frame(requestID: UInt32, flags: FrameFlags = []) -> Frame {
        let body = body
        return Frame(kind: type(of: body).kind, flags: flags, requestID: requestID, payload: body.encodedPayload())
    }

    /// Decodes a frame's payload as the message its kind names.
    ///
    /// Throws ``HealthError`` with code ``ErrorCode/malformedPayload`` naming the kind and the problem.
    public static func decode(_ frame: Frame, limits: MessageLimits = .standard) throws(HealthError) -> Message {
        do {
            return try MessageRegistration[frame.kind].decode(frame.payload, limits)
        } catch let error as CodecError {
            throw HealthError(error.code, "\(frame.kind) payload: \(error.message)")
        } catch let error as HealthError {
            throw error
        } catch {
            throw HealthError(.malformedPayload, "\(frame.kind) payload: \(error)")
        }
    }
}
