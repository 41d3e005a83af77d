import HealthPosix

/// The HTTP API's streamed bodies being written, and the event streams among them (their ``ChangeWatch``es):
/// what ``HealthServer/stop()`` ends cleanly before it closes the connections.
///
/// Each streamed body holds a thread (`hkd-http-body`) and up to about 1.3 MiB of unsent bytes while its client
/// is slow (``HTTPBodyStream``): at most ``limit`` run at once (`--http-max-streams`); beyond it a read is
/// refused with 503 and `Retry-After`.
///
/// Draining ends every event stream (each says why in a last event and ends its body with the last chunk), then
/// waits, at most a bound, until every streamed body has finished; a body that starts meanwhile is refused.
/// Thread-safe; ``drain(within:)`` blocks.
final class HTTPStreams: Sendable {
    private struct State {
        var bodies = 0
        var draining = false
        var watches: [ObjectIdentifier: ChangeWatch] = [:]
    }

    /// Why a streamed body may not start.
    enum Refusal: Error {
        /// The server is stopping.
        case draining
        /// ``limit`` bodies are being written.
        case full(limit: Int)
    }

    private let state = ConditionLock(State())
    /// The most streamed bodies written at once.
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// A streamed body starts; throws once draining or with ``limit`` bodies running (the response is refused).
    func bodyStarted() throws(Refusal) {
        let refusal = state.withLock { state -> Refusal? in
            guard !state.draining else { return .draining }
            guard state.bodies < limit else { return .full(limit: limit) }
            state.bodies += 1
            return nil
        }
        if let refusal { throw refusal }
    }

    /// A streamed body ended (its last bytes are queued on the connection, or it was cut off).
    func bodyEnded() { state.update { $0.bodies -= 1 } }

    /// Follows `watch` until ``stopWatching(_:)``; false once draining (the watch is ended at once).
    func watching(_ watch: ChangeWatch) -> Bool {
        state.withLock { state in
            guard !state.draining else { return false }
            state.watches[ObjectIdentifier(watch)] = watch
            return true
        }
    }

    func stopWatching(_ watch: ChangeWatch) {
        _ = state.withLock { $0.watches.removeValue(forKey: ObjectIdentifier(watch)) }
    }

    /// Ends every event stream with ``StreamEnd/shutdown`` and waits until every streamed body has ended, or
    /// `timeout` passed (a body still going is then cut off with its connection); from now on no body starts.
    func drain(within timeout: Duration) {
        let watches = state.withLock { state in
            state.draining = true
            return Array(state.watches.values)
        }
        for watch in watches { watch.end(.shutdown) }
        _ = state.wait(until: .after(timeout)) { $0.bodies == 0 ? true : nil }
    }
}
