import HealthCodec
import HealthModel
import HealthWire

/// The frame decoder and every message body.
enum WireHarnesses {
    /// Limits a harness picks from by one input byte: tight ones reach the limit checks, roomier ones the rest.
    /// The largest stays at 4 MiB inflated (not the standard 64 MiB): the checks are the same, and a fuzzer that
    /// inflates bombs to 64 MiB runs a hundred times slower.
    static let frameLimits: [FrameLimits] = [
        FrameLimits(maxFrameBytes: 256, maxInflatedBytes: 1024), .handshake,
        FrameLimits(maxFrameBytes: 1 << 20, maxInflatedBytes: 4 << 20),
    ]

    /// What decoding a stream gave: its frames, then the error that ended it, if any.
    struct Outcome: Equatable {
        var frames: [Frame] = []
        var error: WireError?
    }

    /// Decodes `stream` fed in pieces of `sizes` bytes.
    static func decode(_ stream: [UInt8], limits: FrameLimits, sizes: [Int]) -> Outcome {
        var decoder = FrameDecoder(limits: limits)
        var outcome = Outcome()
        var start = 0
        do throws(WireError) {
            for size in sizes {
                decoder.append(stream[start..<start + size])
                start += size
                while let frame = try decoder.next() { outcome.frames.append(frame) }
            }
        } catch {
            outcome.error = error
        }
        return outcome
    }

    /// Byte 0 picks limits, the split seed and whether to deflate; the rest is a byte stream. The stream fed
    /// whole and fed in random pieces must give the same frames and error; every frame must re-encode, plain (and
    /// deflated when byte 0's top bit is set), to itself.
    static let frame = Harness(
        "frame", "FrameDecoder on a byte stream, whole and split; frames re-encode to themselves",
        seeds: { Vectors.frames().flatMap { [[2] + $0, [0x82] + $0] } }
    ) { input in
        let control = input.byte()
        let limits = frameLimits[Int(control) % frameLimits.count]
        let stream = input.rest()
        let whole = decode(stream, limits: limits, sizes: [stream.count])
        let split = decode(stream, limits: limits, sizes: pieceSizes(count: stream.count, seed: UInt64(control)))
        require(whole == split, "split feeding changed the outcome: \(whole.error as Any) vs \(split.error as Any)")
        let roomy = FrameLimits(maxFrameBytes: limits.maxInflatedBytes + 16, maxInflatedBytes: limits.maxInflatedBytes)
        // Deflating costs more than all the rest: only inputs with the top bit of byte 0 set try it.
        let encoders =
            [FrameEncoder(compressionThreshold: .max)]
            + (control & 0x80 != 0 ? [FrameEncoder(compressionThreshold: 0)] : [])
        for frame in whole.frames {
            for encoder in encoders {
                let bytes = encoder.encode(frame)
                let again = decode(bytes, limits: roomy, sizes: [bytes.count])
                require(again.frames == [frame] && again.error == nil, "frame \(frame.kind) does not round-trip")
            }
        }
    }

    /// Limits for message bodies: standard, and tight ones that reach every count check.
    static let messageLimits: [MessageLimits] = [
        .standard,
        MessageLimits(
            batch: BatchLimits(maxRows: 16, maxSources: 4, maxStringBytes: 32, maxMetadataEntriesPerRow: 4),
            maxListEntries: 8, maxStringBytes: 32),
    ]

    /// Byte 0 picks the message kind, byte 1 the limits; the rest is the payload. A decoded message is validated
    /// as the server would, and its encoding must decode to a message with the same encoding.
    static let message = Harness(
        "message", "Message.decode of every kind (kind from byte 0), validation, encode/decode round trip",
        seeds: { Vectors.valid().map { [UInt8(MessageKind.allCases.firstIndex(of: $0.kind)!), 0] + $0.payload } }
    ) { input in
        let kind = MessageKind.allCases[input.choice(MessageKind.allCases.count)]
        let limits = messageLimits[input.choice(messageLimits.count)]
        let payload = input.rest()
        guard
            let message = attempt({
                try Message.decode(Frame(kind: kind, requestID: 1, payload: payload), limits: limits)
            })
        else { return }
        require(message.kind == kind, "decoded a \(message.kind) from a \(kind) frame")
        attempt { try message.validateRequest() }
        let encoded = message.body.encodedPayload()
        guard
            let again = attempt({
                try Message.decode(Frame(kind: kind, requestID: 1, payload: encoded), limits: .standard)
            })
        else {
            require(false, "\(kind): the re-encoded message does not decode")
            return
        }
        require(again.body.encodedPayload() == encoded, "\(kind): decode(encode(m)) encodes differently")
    }
}
