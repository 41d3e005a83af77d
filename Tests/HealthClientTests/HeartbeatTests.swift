import Testing

@testable import HealthClient

@Suite("client heartbeat")
struct HeartbeatTests {
    @Test("a silent server with subscriptions is pinged once after the interval and given up after twice it")
    func pingThenLost() {
        let start = ContinuousClock.now
        var heartbeat = Heartbeat(interval: .seconds(15), now: start)
        #expect(heartbeat.check(now: start + .seconds(14), subscribed: true) == .quiet)
        #expect(heartbeat.check(now: start + .seconds(15), subscribed: true) == .ping)
        #expect(heartbeat.check(now: start + .seconds(20), subscribed: true) == .quiet, "one ping per silence")
        #expect(heartbeat.check(now: start + .seconds(30), subscribed: true) == .lost(.seconds(30)))
    }

    @Test("anything heard restarts the silence; without subscriptions or an interval nothing is pinged")
    func heardAndUnsubscribed() {
        let start = ContinuousClock.now
        var heartbeat = Heartbeat(interval: .seconds(10), now: start)
        #expect(heartbeat.check(now: start + .seconds(10), subscribed: true) == .ping)
        heartbeat.heard(at: start + .seconds(11))
        #expect(heartbeat.check(now: start + .seconds(20), subscribed: true) == .quiet)
        #expect(heartbeat.check(now: start + .seconds(21), subscribed: true) == .ping, "a new silence pings again")
        #expect(heartbeat.check(now: start + .seconds(60), subscribed: false) == .quiet)
        #expect(heartbeat.check(now: start + .seconds(65), subscribed: true) == .quiet, "the clock restarted")
        var never = Heartbeat(interval: nil, now: start)
        #expect(never.check(now: start + .seconds(3600), subscribed: true) == .quiet)
    }
}
