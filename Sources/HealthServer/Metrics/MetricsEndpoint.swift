import Foundation
import HealthPosix

/// A small HTTP/1.1 responder for operators, without tokens (`--metrics-listen`): `GET /metrics` (Prometheus text
/// format), `GET /healthz` (the process is up) and `GET /readyz` (recovery has finished and the write-ahead log
/// accepts changes; 503 otherwise). One request per connection (`Connection: close`); a request head over 8 KiB
/// gets 431, a method other than GET or HEAD gets 405, another path 404. Requests are read on the event loop;
/// the page is rendered there too (it reads counters and takes each shard's read lock briefly).
final class MetricsEndpoint: Sendable {
    private let tcp: TCPServer

    /// The port it listens on.
    var port: Int { tcp.port }

    /// Binds `host:port` and serves `server`'s pages on the server's loops.
    init(host: String, port: Int, group: EventLoopGroup, server: HealthServer) throws {
        tcp = try TCPServer.start(
            group: group, configuration: TCPServerConfiguration(host: host, port: port, maxConnections: 64)
        ) { [weak server] connection in HTTPResponder(server: server, loop: connection.loop) }
    }

    func stop() { tcp.stop() }
}

/// One metrics connection: reads the request head, answers, closes.
final class HTTPResponder: ConnectionHandler, Sendable {
    private weak let server: HealthServer?
    /// The request head received so far (requests are small; nothing is read after it).
    private let head: LoopBoundBox<[UInt8]>

    static let maxHeadBytes = 8 << 10

    init(server: HealthServer?, loop: EventLoop) {
        self.server = server
        head = LoopBoundBox([], loop: loop)
    }

    func connection(_ connection: Connection, didRead bytes: UnsafeRawBufferPointer) {
        guard connection.isOpen else { return }
        head.value.append(contentsOf: bytes)
        let buffer = head.value
        if buffer.count > Self.maxHeadBytes {
            return respond(connection, status: "431 Request Header Fields Too Large", body: "request head too large\n")
        }
        guard let end = Self.endOfHead(buffer) else { return }
        let requestLine = String(decoding: buffer[..<end].prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            return respond(connection, status: "400 Bad Request", body: "malformed request line\n")
        }
        let method = parts[0]
        let path = parts[1].split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        guard method == "GET" || method == "HEAD" else {
            return respond(
                connection, status: "405 Method Not Allowed", body: "only GET\n", extra: "Allow: GET, HEAD\r\n")
        }
        let omitBody = method == "HEAD"
        switch path {
        case "/metrics":
            guard let server else { return respond(connection, status: "503 Service Unavailable", body: "stopping\n") }
            respond(
                connection, status: "200 OK", body: MetricsPage.render(server),
                contentType: "text/plain; version=0.0.4; charset=utf-8", omitBody: omitBody)
        case "/healthz":
            respond(connection, status: "200 OK", body: "ok\n", omitBody: omitBody)
        case "/readyz":
            if let server, server.durable.acceptsChanges {
                respond(connection, status: "200 OK", body: "ready\n", omitBody: omitBody)
            } else {
                respond(
                    connection, status: "503 Service Unavailable",
                    body: "the write-ahead log does not accept changes (disk full or a failed fsync)\n",
                    omitBody: omitBody)
            }
        default:
            respond(connection, status: "404 Not Found", body: "no such page; try /metrics, /healthz or /readyz\n")
        }
    }

    func connectionDidClose(_ connection: Connection, error: SystemError?) {}

    private func respond(
        _ connection: Connection, status: String, body: String, contentType: String = "text/plain; charset=utf-8",
        extra: String = "", omitBody: Bool = false
    ) {
        let bodyBytes = Array(body.utf8)
        let head =
            "HTTP/1.1 \(status)\r\nContent-Type: \(contentType)\r\nContent-Length: \(bodyBytes.count)\r\n\(extra)"
            + "Connection: close\r\n\r\n"
        connection.write(Array(head.utf8) + (omitBody ? [] : bodyBytes))
        connection.closeAfterFlush()
    }

    /// The offset of the blank line ending a request head, if it arrived.
    static func endOfHead(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count where bytes[index] == 0x0A {
            if bytes[index - 1] == 0x0D, bytes[index - 2] == 0x0A, bytes[index - 3] == 0x0D { return index }
            if bytes[index - 1] == 0x0A { return index }
        }
        return nil
    }
}
