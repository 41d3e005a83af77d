import CNats
import Foundation

/// One connection to a NATS server (or cluster) with JetStream: streams, publishing with a fenced sequence,
/// reading messages by sequence, and key-value buckets.
///
/// Thread-safe: nats.c's connection and JetStream context may be used from any number of threads at once (its
/// documentation: only destroying the context must not race other calls, which ``close()`` ensures by being
/// the last call). That is why this wrapper of their pointers is `@unchecked Sendable`. Every call blocks on a
/// request to the server, bounded by the wait given at connection: call it on worker threads.
public final class JetStream: @unchecked Sendable {
    private let connection: OpaquePointer
    private let context: OpaquePointer
    /// The servers, as given.
    public let urls: String
    /// How long each request waits for its answer (a publish for its acknowledgement) unless told otherwise.
    public let wait: Duration

    /// Connects to `urls` (comma-separated `nats://host:port`) and opens its JetStream context. `wait` bounds
    /// each JetStream request (a publish waits that long for its acknowledgement); a lost connection is
    /// re-established in the background every `reconnectWait`, and one whose server stopped answering `ping`s
    /// (two unanswered, one every `pingInterval`) is taken for lost.
    public init(
        urls: String, wait: Duration = .seconds(5), reconnectWait: Duration = .milliseconds(250),
        pingInterval: Duration = .seconds(2)
    ) throws(NATSFailure) {
        var nc: OpaquePointer?
        let servers = urls.split(separator: ",").map { strdup($0.trimmingCharacters(in: .whitespaces)) }
        defer { for server in servers { free(server) } }
        var list = servers.map { UnsafePointer($0) }
        try check(
            hk_nats_connect(
                &nc, &list, Int32(list.count), wait.milliseconds, reconnectWait.milliseconds, pingInterval.milliseconds),
            "cannot connect to \(urls)")
        var js: OpaquePointer?
        let status = hk_nats_jetstream(&js, nc, wait.milliseconds)
        guard status == NATS_OK, let nc, let js else {
            natsConnection_Destroy(nc)
            throw NATSFailure("cannot open JetStream on \(urls)", status)
        }
        connection = nc
        context = js
        self.urls = urls
        self.wait = wait
    }

    /// Creates the stream `name` holding `subject` with `replicas` copies; an existing stream is kept.
    public func addStream(_ name: String, subject: String, replicas: Int) throws(NATSFailure) {
        var code = jsErrCode(rawValue: 0)
        try check(
            hk_js_add_stream(context, name, subject, Int64(replicas), &code), "cannot create stream \(name)", code)
    }

    /// Throws unless JetStream answers within `wait`: its account information, which in a NATS cluster only the
    /// metadata leader gives (a cluster still electing one, or without a quorum, does not answer).
    public func checkReady(wait: Duration = .seconds(1)) throws(NATSFailure) {
        var code = jsErrCode(rawValue: 0)
        try check(hk_js_ready(context, wait.milliseconds, &code), "JetStream does not answer within \(wait)", code)
    }

    /// Raises the replicas of stream `name` to `replicas` when it has fewer (JetStream copies its messages to the
    /// new replicas); returns the count it had.
    @discardableResult
    public func raiseReplicas(_ name: String, to replicas: Int) throws(NATSFailure) -> Int {
        var previous: Int64 = 0
        var code = jsErrCode(rawValue: 0)
        try check(
            hk_js_raise_replicas(context, name, Int64(replicas), &previous, &code),
            "cannot raise the replicas of stream \(name) to \(replicas)", code)
        return Int(previous)
    }

    /// The servers of the NATS cluster as they answer for themselves, and the servers the connection knows.
    public struct Servers: Sendable, Equatable {
        /// The servers with JetStream that answered the ping, by name.
        public var jetStream: Set<String>
        /// Whether the servers that answered are in a NATS cluster.
        public var clustered: Bool
        /// The servers in the connection's pool: the URLs given and the ones the servers announced.
        public var known: Int

        public init(jetStream: Set<String>, clustered: Bool, known: Int) {
            self.jetStream = jetStream
            self.clustered = clustered
            self.known = known
        }

        /// The JetStream cluster's size: 1 for a server outside a cluster; in a cluster, the JetStream servers
        /// that answered or, when more, the servers known (one still starting or down has not answered); the
        /// servers known when none answered (the system account's requests are off).
        public var count: Int {
            if jetStream.isEmpty { return max(1, known) }
            return clustered ? max(jetStream.count, known) : 1
        }
    }

    /// Asks every server of the NATS cluster for itself (`$SYS.REQ.ACCOUNT.PING.CONNZ`, which each server
    /// answers for the account with its name, cluster and whether it runs JetStream), collecting answers until
    /// none came for `quiet` (or none at all for `wait`).
    public func servers(quiet: Duration = .milliseconds(250), wait: Duration = .seconds(2)) throws(NATSFailure)
        -> Servers
    {
        var inbox: UnsafeMutablePointer<natsInbox>?
        try check(natsInbox_Create(&inbox), "cannot make an inbox")
        defer { natsInbox_Destroy(inbox) }
        var subscription: OpaquePointer?
        try check(natsConnection_SubscribeSync(&subscription, connection, inbox), "cannot subscribe to an inbox")
        defer {
            natsSubscription_Unsubscribe(subscription)
            natsSubscription_Destroy(subscription)
        }
        try check(
            natsConnection_PublishRequestString(connection, Self.serverPing, inbox, #"{"limit":1}"#),
            "cannot ask the NATS servers for themselves")
        var servers = Servers(jetStream: [], clustered: false, known: Int(hk_nats_known_servers(connection)))
        var timeout = wait
        while true {
            var msg: OpaquePointer?
            let status = natsSubscription_NextMsg(&msg, subscription, timeout.milliseconds)
            defer { natsMsg_Destroy(msg) }
            guard status == NATS_OK else { break }
            timeout = quiet
            guard let answer = try? JSONSerialization.jsonObject(with: Data(Self.data(of: msg))) as? [String: Any],
                let server = answer["server"] as? [String: Any], let name = server["name"] as? String
            else { continue }
            if server["jetstream"] as? Bool == true { servers.jetStream.insert(name) }
            if let cluster = server["cluster"] as? String, !cluster.isEmpty { servers.clustered = true }
        }
        return servers
    }

    /// The request every NATS server answers for the requesting account.
    static let serverPing = "$SYS.REQ.ACCOUNT.PING.CONNZ"

    /// What a stream holds.
    public struct StreamState: Sendable, Equatable {
        /// The sequence of its first message (above the last one when it is empty: the next to come).
        public var firstSequence: UInt64
        /// The sequence of its last message (0: none yet).
        public var lastSequence: UInt64
        public var messages: UInt64
        public var bytes: UInt64
        public var replicas: Int
    }

    /// The state of stream `name`.
    public func streamState(_ name: String) throws(NATSFailure) -> StreamState {
        var (first, last, messages, bytes, replicas): (UInt64, UInt64, UInt64, UInt64, Int64) = (0, 0, 0, 0, 0)
        var code = jsErrCode(rawValue: 0)
        try check(
            hk_js_stream_state(context, name, &first, &last, &messages, &bytes, &replicas, &code),
            "cannot read the state of stream \(name)", code)
        return StreamState(
            firstSequence: first, lastSequence: last, messages: messages, bytes: bytes, replicas: Int(replicas))
    }

    /// Publishes `data` to `subject` provided the stream's last sequence is `expectedLast` (the
    /// `Nats-Expected-Last-Sequence` header), and returns the sequence JetStream stored it at once it
    /// acknowledged it (on a quorum of the stream's replicas), waiting for it up to `wait` (at least 1 ms; `nil`:
    /// ``wait``). A stream that moved on throws a failure whose ``NATSFailure/isWrongLastSequence`` holds: nothing
    /// was stored.
    public func publish(_ data: [UInt8], to subject: String, expectedLast: UInt64, wait: Duration? = nil)
        throws(NATSFailure) -> UInt64
    {
        var sequence: UInt64 = 0
        var code = jsErrCode(rawValue: 0)
        let milliseconds = max(1, (wait ?? self.wait).milliseconds)
        let status = data.withUnsafeBytes { bytes in
            hk_js_publish_after(
                context, subject, bytes.baseAddress, Int32(bytes.count), expectedLast, milliseconds, &sequence, &code)
        }
        try check(status, "cannot publish to \(subject) after sequence \(expectedLast)", code)
        return sequence
    }

    /// Publishes `data` to `subject` provided the last message on `subject` is at stream sequence
    /// `expectedLastOnSubject` (0: provided `subject` has none), and returns the stream sequence JetStream
    /// stored it at. Refused with ``NATSFailure/isWrongLastSequence`` otherwise: nothing was stored.
    public func publish(_ data: [UInt8], to subject: String, expectedLastOnSubject: UInt64) throws(NATSFailure)
        -> UInt64
    {
        var sequence: UInt64 = 0
        var code = jsErrCode(rawValue: 0)
        let status = data.withUnsafeBytes { bytes in
            hk_js_publish_after_subject(
                context, subject, bytes.baseAddress, Int32(bytes.count), expectedLastOnSubject, &sequence, &code)
        }
        try check(status, "cannot publish to \(subject) after its message \(expectedLastOnSubject)", code)
        return sequence
    }

    /// Publishes `data` to `subject` and returns the stream sequence JetStream stored it at.
    public func publish(_ data: [UInt8], to subject: String) throws(NATSFailure) -> UInt64 {
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(rawValue: 0)
        let status = data.withUnsafeBytes { bytes in
            js_Publish(&ack, context, subject, bytes.baseAddress, Int32(bytes.count), nil, &code)
        }
        defer { jsPubAck_Destroy(ack) }
        try check(status, "cannot publish to \(subject)", code)
        return ack?.pointee.Sequence ?? 0
    }

    /// The last message on `subject` in stream `stream`, with its stream sequence; `nil` when there is none.
    public func lastMessage(_ stream: String, subject: String) throws(NATSFailure) -> (
        sequence: UInt64, data: [UInt8]
    )? {
        var msg: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetLastMsg(&msg, context, stream, subject, nil, &code)
        defer { natsMsg_Destroy(msg) }
        if status != NATS_OK {
            let failure = NATSFailure("cannot read the last message on \(subject) of stream \(stream)", status, code)
            if failure.isNotFound { return nil }
            throw failure
        }
        return (natsMsg_GetSequence(msg), Self.data(of: msg))
    }

    /// Removes the messages of stream `stream` on `subject` whose sequence is below `sequence`.
    public func purge(_ stream: String, subject: String, below sequence: UInt64) throws(NATSFailure) {
        // JetStream reads a purge up to sequence 0 or 1 as one without a sequence: every message of the subject.
        guard sequence > 1 else { return }
        var code = jsErrCode(rawValue: 0)
        try check(
            hk_js_purge_below(context, stream, subject, sequence, &code),
            "cannot purge \(subject) of stream \(stream) below sequence \(sequence)", code)
    }

    /// The data of message `sequence` of stream `stream`; `nil` when there is none (deleted, or past the end).
    public func message(_ stream: String, sequence: UInt64) throws(NATSFailure) -> [UInt8]? {
        var msg: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        let status = js_GetMsg(&msg, context, stream, sequence, nil, &code)
        defer { natsMsg_Destroy(msg) }
        if status != NATS_OK {
            let failure = NATSFailure("cannot read message \(sequence) of stream \(stream)", status, code)
            if failure.isNotFound { return nil }
            throw failure
        }
        return Self.data(of: msg)
    }

    /// Reads the messages of stream `stream` (holding `subject`) after sequence `after` through sequence `end`, in
    /// order, passing each one's sequence and data to `body`; deleted messages are skipped. One ordered consumer
    /// pushes them (flow-controlled), instead of one request per message as ``message(_:sequence:)`` makes. A
    /// message not arriving within `wait` throws (the stream is unreachable, or lost messages up to `end`).
    public func read(
        _ stream: String, subject: String, after: UInt64, through end: UInt64, wait: Duration = .seconds(10),
        _ body: (_ sequence: UInt64, _ data: [UInt8]) throws -> Void
    ) throws {
        guard after < end else { return }
        var subscription: OpaquePointer?
        var code = jsErrCode(rawValue: 0)
        try check(
            hk_js_ordered_subscribe(&subscription, context, stream, subject, after + 1, &code),
            "cannot read stream \(stream) after sequence \(after)", code)
        defer {
            natsSubscription_Unsubscribe(subscription)
            natsSubscription_Destroy(subscription)
        }
        var sequence = after
        while sequence < end {
            var msg: OpaquePointer?
            let status = natsSubscription_NextMsg(&msg, subscription, wait.milliseconds)
            defer { natsMsg_Destroy(msg) }
            try check(
                status, "stream \(stream): no message after sequence \(sequence) within \(wait) (its end: \(end))")
            try check(hk_msg_stream_sequence(msg, &sequence), "stream \(stream): a message without its sequence")
            try body(sequence, Self.data(of: msg))
        }
    }

    /// Opens the key-value bucket `bucket`, creating it when it does not exist with `replicas` copies, `history`
    /// revisions per key, and entries that expire `ttl` (at least 100 ms) after their last write (`nil`: never).
    public func keyValue(_ bucket: String, ttl: Duration? = nil, replicas: Int = 1, history: UInt8 = 1)
        throws(NATSFailure) -> KeyValueBucket
    {
        var kv: OpaquePointer?
        try check(
            hk_kv_bucket(&kv, context, bucket, ttl?.nanoseconds ?? 0, Int32(replicas), history),
            "cannot open key-value bucket \(bucket)")
        guard let kv else { throw NATSFailure("cannot open key-value bucket \(bucket)", NATS_ERR) }
        return KeyValueBucket(kv, name: bucket, owner: self)
    }

    /// Closes the connection. Call it last: no other call may run or follow.
    public func close() {
        jsCtx_Destroy(context)
        natsConnection_Close(connection)
    }

    deinit {
        natsConnection_Destroy(connection)
    }

    /// A message's data, copied.
    static func data(of msg: OpaquePointer?) -> [UInt8] {
        guard let msg, let base = natsMsg_GetData(msg) else { return [] }
        let count = Int(natsMsg_GetDataLength(msg))
        return base.withMemoryRebound(to: UInt8.self, capacity: count) {
            Array(UnsafeBufferPointer(start: $0, count: count))
        }
    }
}

extension Duration {
    /// Whole milliseconds (rounded down), as nats.c takes its times.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Whole nanoseconds (rounded down), as JetStream's configurations take durations.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
