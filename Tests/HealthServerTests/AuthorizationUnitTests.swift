import HealthModel
import HealthWire
import Testing

@testable import HealthServer

@Suite("Authorization building blocks")
struct AuthorizationUnitTests {
    @Test("tokens carry 256 random bits and the identity id, and parse back; malformed text is no token")
    func tokens() throws {
        let a = AccessToken(identityID: 7, secret: try IdentityRegistry.random(32))
        let b = AccessToken(identityID: 7, secret: try IdentityRegistry.random(32))
        #expect(a.secret.count == 32 && a.secret != b.secret)
        #expect(a.text.hasPrefix("hkd1_00000007_"))
        #expect(AccessToken(a.text) == a)
        for bad in [
            "", "hkd1_", String(a.text.dropLast()), a.text + "0", a.text.uppercased(),
            a.text.replacingOccurrences(of: "hkd1", with: "hkd2"),
            a.text.replacingOccurrences(of: "00000007", with: "00000000"),
        ] {
            #expect(AccessToken(bad) == nil, "\(bad)")
        }
    }

    @Test("the failure throttle doubles per failure up to its cap, per address, and forgets on success")
    func throttle() {
        let throttle = FailureThrottle(baseDelay: .milliseconds(100), maxDelay: .seconds(1), capacity: 2)
        #expect(
            (1...6).map { _ in throttle.failed("10.0.0.1") }
                == [100, 200, 400, 800, 1000, 1000].map(Duration.milliseconds))
        #expect(throttle.failed("10.0.0.2") == .milliseconds(100))
        throttle.succeeded("10.0.0.1")
        #expect(throttle.failed("10.0.0.1") == .milliseconds(100))
        // Over capacity the oldest address is forgotten.
        _ = throttle.failed("10.0.0.3")
        #expect(throttle.failed("10.0.0.2") == .milliseconds(100))
    }

    @Test("grants: share and read per type, * for all, subjects, and HealthKit's sharing status")
    func access() throws {
        let access = IdentityAccess(
            id: 9, name: "app", subjects: ["anna"],
            grants: [
                TypeGrant(type: "stepCount", share: true, read: false),
                TypeGrant(type: "heartRate", share: false, read: true),
            ],
            isAdmin: false)
        let steps = try QuantityType.named("stepCount")
        let heart = try QuantityType.named("heartRate")
        let mass = try QuantityType.named("bodyMass")
        #expect(access.sharingStatus(steps) == .sharingAuthorized)
        #expect(access.sharingStatus(heart) == .sharingDenied)
        #expect(access.sharingStatus(mass) == .notDetermined)
        #expect(try access.readFilter(.all, subject: "anna", type: "stepCount").writer == 9)
        #expect(try access.readFilter(.all, subject: "anna", type: "heartRate").writer == nil)
        #expect(try access.deleteFilter(.all, subject: "anna", type: "stepCount").writer == 9)
        #expect(throws: HealthError(.forbidden, "identity \"app\" may not access subject \"ben\"")) {
            try access.readFilter(.all, subject: "ben", type: "heartRate")
        }
        #expect(throws: HealthError(.forbidden, "identity \"app\" has no share permission for heartRate")) {
            try access.checkShare(subject: "anna", type: "heartRate")
        }
        let everything = IdentityAccess(
            id: 1, name: "admin", subjects: nil, grants: [TypeGrant(type: "*", share: true, read: true)], isAdmin: true)
        #expect(everything.canShare(mass) && everything.canRead(mass))
        #expect(try everything.deleteFilter(.all, subject: "zoe", type: "bodyMass").writer == nil)
    }
}
