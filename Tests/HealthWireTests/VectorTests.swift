import Foundation
import HealthCodec
import HealthModel
import Testing

@testable import HealthWire

/// Runs a byte string through everything a server does before dispatch: frame decoding, payload decoding and
/// request validation. Returns the message or the first error.
func decodeAll(_ bytes: [UInt8], limits: FrameLimits) -> Result<(Frame, Message), HealthError> {
    var decoder = FrameDecoder(limits: limits)
    decoder.append(bytes)
    do {
        guard let frame = try decoder.next() else {
            return .failure(HealthError(.malformedFrame, "incomplete frame"))
        }
        let message = try Message.decode(frame)
        try message.validateRequest()
        return .success((frame, message))
    } catch let error as WireError {
        return .failure(error.healthError)
    } catch let error as HealthError {
        return .failure(error)
    } catch {
        return .failure(HealthError(.internalError, "\(error)"))
    }
}

@Suite("Golden vectors in Protocol/vectors", .serialized)
struct VectorTests {
    static let rewrite = ProcessInfo.processInfo.environment["HK_WRITE_VECTORS"] == "1"

    @Test("writing the vectors, when asked to")
    func writeVectorsWhenAsked() throws {
        guard VectorTests.rewrite else { return }
        for entry in Golden.valid {
            let frame = entry.message.frame(requestID: entry.requestID, flags: entry.flags)
            let bytes = FrameEncoder(compressionThreshold: .max).encode(frame)
            try VectorFile(
                name: entry.name,
                fields: [
                    "kind": entry.message.kind.name, "hex": VectorFile.hex(bytes),
                    "value": String(reflecting: entry.message),
                ],
                comments: [entry.comment]
            ).write(to: "valid", order: ["kind", "hex", "value"])
        }
        for entry in Golden.malformed {
            let limits = Golden.malformedLimits
            guard case .failure(let error) = decodeAll(entry.bytes, limits: limits) else {
                Issue.record("malformed vector \(entry.name) decodes")
                continue
            }
            try VectorFile(
                name: entry.name,
                fields: [
                    "hex": VectorFile.hex(entry.bytes), "limits": "\(limits.maxFrameBytes) \(limits.maxInflatedBytes)",
                    "error": "\(error.code.rawValue) \(error.code.name)", "message": error.message,
                ],
                comments: [entry.comment]
            ).write(to: "malformed", order: ["hex", "limits", "error", "message"])
        }
    }

    @Test("every valid vector decodes to its value and re-encodes to its bytes")
    func validVectors() throws {
        let vectors = try VectorFile.load("valid")
        #expect(vectors.count >= MessageKind.allCases.count)
        for vector in vectors {
            let result = decodeAll(vector.bytes, limits: .standard)
            guard case .success(let (frame, message)) = result else {
                Issue.record("\(vector.name): \(result)")
                continue
            }
            #expect(message.kind.name == vector.fields["kind"], "\(vector.name)")
            #expect(String(reflecting: message) == vector.fields["value"], "\(vector.name)")
            let reencoded = FrameEncoder(compressionThreshold: .max).encode(
                message.frame(requestID: frame.requestID, flags: frame.flags))
            #expect(VectorFile.hex(reencoded) == vector.fields["hex"], "\(vector.name) re-encodes differently")
        }
    }

    @Test("every message kind has a valid vector")
    func everyKindHasAVector() throws {
        let kinds = Set(try VectorFile.load("valid").compactMap { $0.fields["kind"] })
        for kind in MessageKind.allCases {
            #expect(kinds.contains(kind.name), "no vector for message kind \(kind)")
        }
    }

    @Test("every malformed vector gives its documented error")
    func malformedVectors() throws {
        let vectors = try VectorFile.load("malformed")
        #expect(vectors.count >= 10)
        for vector in vectors {
            let limitParts = (vector.fields["limits"] ?? "").split(separator: " ").compactMap { Int($0) }
            try #require(limitParts.count == 2, "\(vector.name) has no limits")
            let limits = FrameLimits(maxFrameBytes: limitParts[0], maxInflatedBytes: limitParts[1])
            switch decodeAll(vector.bytes, limits: limits) {
            case .success: Issue.record("\(vector.name) decoded without error")
            case .failure(let error):
                #expect("\(error.code.rawValue) \(error.code.name)" == vector.fields["error"], "\(vector.name)")
                #expect(error.message == vector.fields["message"], "\(vector.name)")
            }
        }
    }

    @Test("the vectors in the files are the ones the code describes")
    func filesMatchCatalog() throws {
        let names = Set(try VectorFile.load("valid").map(\.name))
        #expect(names == Set(Golden.valid.map(\.name)))
        let malformed = Set(try VectorFile.load("malformed").map(\.name))
        #expect(malformed == Set(Golden.malformed.map(\.name)))
    }
}
