import HealthHTTP

/// The HTTP listener's request parser (http-parser under HTTPRequestParser): a client's bytes in pieces.
enum HTTPHarnesses {
    /// Caps small enough for the fuzzer to reach them.
    static let limits = HTTPRequestParser.Limits(maxHeaderBytes: 512, maxHeaderCount: 8, maxBodyBytes: 1024)

    /// Byte 0 seeds the split; the rest is what a client sends. No input may crash the parser; it never consumes
    /// more than it was given; every request it yields is within the caps and decodes its target's path and query
    /// without crashing; after an error it keeps refusing.
    static let request = Harness(
        "http-request", "HTTPRequestParser.parse: a client's bytes in pieces; caps hold, errors stick",
        seeds: {
            [
                [0] + Array("GET /v1/types?a=%41+b HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                [3] + Array("POST /v1/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n".utf8),
            ]
        }
    ) { input in
        let seed = UInt64(input.byte())
        let stream = input.rest()
        let parser = HTTPRequestParser(limits: limits)
        var buffer: [UInt8] = []
        var start = 0
        var failed = false
        for size in pieceSizes(count: stream.count, seed: seed, maxPiece: 256) {
            buffer += stream[start..<start + size]
            start += size
            while true {
                let outcome = buffer.withUnsafeBytes { bytes in Result { try parser.parse(bytes) } }
                switch outcome {
                case .failure:
                    failed = true
                case .success(let (request, used)):
                    require(!failed, "a request after an error")
                    require(used <= buffer.count, "consumed \(used) of \(buffer.count) bytes")
                    buffer.removeFirst(used)
                    guard let request else { break }
                    require(request.body.count <= limits.maxBodyBytes, "a body over the cap")
                    require(request.headers.count <= limits.maxHeaderCount, "headers over the cap")
                    _ = request.pathSegments
                    _ = request.queryItems
                    continue
                }
                break
            }
            if failed { break }
        }
    }
}
