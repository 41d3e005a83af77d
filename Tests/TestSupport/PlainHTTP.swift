import HealthPosix

/// One plain HTTP/1.1 exchange, as a probe makes it: a request on a fresh connection, everything read until the
/// server closes, split into the status line and the body.
public enum PlainHTTP {
    /// `method path` to `127.0.0.1:port`.
    public static func get(_ path: String, port: Int, method: String = "GET") throws -> (status: String, body: String) {
        let socket = try ClientSocket.connect(host: "127.0.0.1", port: port, timeout: .seconds(5))
        defer { socket.close() }
        try socket.write(Array("\(method) \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), timeout: .seconds(5))
        return try response(socket)
    }

    /// Everything `socket` reads until the server closes, as a status line and a body.
    public static func response(_ socket: ClientSocket) throws -> (status: String, body: String) {
        var bytes: [UInt8] = []
        while true {
            let chunk = try socket.read(maxBytes: 65_536, timeout: .seconds(10))
            if chunk.isEmpty { break }
            bytes += chunk
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        return (parts[0].components(separatedBy: "\r\n")[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
