import Foundation
import HealthPosix
import HealthTLS

/// The server's TLS layer: what a client's first bytes do to a connection (OpenSSL parses the records).
enum TLSHarnesses {
    /// A server context with a self-signed certificate, made once per process in a temporary directory.
    static let context: TLSContext = {
        let directory = try! FileSystem.makeTemporaryDirectory(prefix: "hkfuzz-tls")
        let certificate = try! SelfSignedCertificate.generate(
            commonName: "localhost", dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        try! certificate.write(certificateTo: directory + "/cert.pem", keyTo: directory + "/key.pem")
        return try! TLSContext.server(certificateFile: directory + "/cert.pem", keyFile: directory + "/key.pem")
    }()

    /// Byte 0 seeds the split; the rest is what a client sends, fed to a fresh server layer in pieces. No input
    /// may crash it or reach the handler (no handshake can finish without the client's keys), and a failure
    /// ends the stream: nothing more comes out after it.
    static let layer = Harness(
        "tls-layer", "TLSServerLayer.received: a client's first bytes in pieces; nothing reaches the handler",
        seeds: { [[0, 0x16, 0x03, 0x01, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01, 0x00], [1] + Array("HK\u{1}\u{1}".utf8)] }
    ) { input in
        let seed = UInt64(input.byte())
        let stream = input.rest()
        guard let layer = try? TLSServerLayer(context: context, plaintextRefusal: [0xEE]) else { return }
        var start = 0
        var failed = false
        for size in pieceSizes(count: stream.count, seed: seed, maxPiece: 512) {
            var output = StreamLayerOutput()
            stream[start..<start + size].withUnsafeBytes { layer.received($0, into: &output) }
            start += size
            require(output.forHandler.isEmpty, "plaintext reached the handler without a handshake")
            require(!failed || (output.forPeer.isEmpty && output.failure == nil), "output after a failure")
            if output.failure != nil { failed = true }
        }
    }
}
