import Foundation
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Authorization through the real hkd (HEALTHKIT.md §10, SECURITY.md): revocation and writers across a restart,
/// the failure throttle and what reaches disk and logs. The grant matrix, administration and revocation on an
/// open connection run in process: HealthServerTests' EmbeddedAuthorizationTests.
@Suite("hkd authorization", .serialized)
struct AuthorizationTests {
    typealias Identity = AuthorizationMatrix.Identity

    /// `count` samples of `type` for `subject` (``AuthorizationMatrix/samples(_:subject:count:value:offset:)``).
    static func samples(_ type: String, subject: String, count: Int, value: Double, offset: Int = 0) throws -> [Sample]
    {
        try AuthorizationMatrix.samples(type, subject: subject, count: count, value: value, offset: offset)
    }

    /// Starts hkd, creates the matrix identities with the admin token and stores ``AuthorizationMatrix/stored``.
    static func populatedServer() async throws -> (TestServer, [Identity]) {
        let hkd = try await TestServer()
        var identities = AuthorizationMatrix.identities(adminToken: hkd.token)
        let admin = hkd.client()
        defer { admin.close() }
        for index in identities.indices.dropFirst() {
            let result = try await admin.administer(.create(identities[index].spec))
            #expect(result.identities.map(\.spec) == [identities[index].spec])
            #expect(result.token.hasPrefix("hkd1_"))
            identities[index].token = result.token
        }
        for entry in AuthorizationMatrix.stored {
            let identity = try #require(identities.first { $0.spec.name == entry.writer })
            let client = hkd.client(token: identity.token)
            defer { client.close() }
            _ = try await client.insert(
                try samples(
                    entry.type, subject: entry.subject, count: entry.count, value: entry.value,
                    offset: AuthorizationMatrix.offset(of: entry.writer)))
        }
        return (hkd, identities)
    }

    /// The error code a request failed with, or `nil` when it succeeded.
    static func refusal<T>(_ body: () async throws -> T) async -> HealthClientError? {
        do {
            _ = try await body()
            return nil
        } catch let error as HealthClientError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test("a revoked token stays revoked after a restart")
    func revocationSurvivesRestart() async throws {
        let (hkd, identities) = try await Self.populatedServer()
        let admin = hkd.client()
        defer { admin.close() }
        #expect(try await admin.administer(.revoke(name: "writer")).identities.first?.revoked == true)
        await hkd.stop()
        let restarted = try await hkd.restart()
        let afterRestart = HealthClient(
            ClientConfiguration(port: restarted.port, token: identities[2].token, retry: .none))
        defer { afterRestart.close() }
        #expect(await Self.refusal { try await afterRestart.connect() }?.code == .tokenRevoked)
        await restarted.stop()
    }

    @Test("who wrote each sample survives a restart: a write-only identity still sees only its own samples")
    func writersPersist() async throws {
        let (hkd, identities) = try await Self.populatedServer()
        await hkd.stop()  // a clean stop writes a snapshot; the next start reads the writer column from it
        let restarted = try await hkd.restart()
        let writer = restarted.client(token: identities[2].token)
        #expect(try await writer.samples("stepCount", subject: "anna").map(\.value) == [100, 100, 100])
        _ = try await writer.insert(try Self.samples("stepCount", subject: "anna", count: 2, value: 100, offset: 300))
        writer.close()
        await restarted.kill()  // no snapshot: the writer of the last insert comes from the log
        let replayed = try await hkd.restart()
        let again = replayed.client(token: identities[2].token)
        defer { again.close() }
        #expect(try await again.samples("stepCount", subject: "anna").count == 5)
        let admin = replayed.client()
        defer { admin.close() }
        #expect(try await admin.samples("stepCount", subject: "anna").count == 15)
        await replayed.stop()
    }

    @Test(
        "missing and wrong tokens are refused, closed and slowed down; tokens never reach the log or the disk in clear")
    func refusalsAndSecrecy() async throws {
        let (hkd, identities) = try await Self.populatedServer()
        let anonymous = HealthClient(ClientConfiguration(port: hkd.port, retry: .none))
        defer { anonymous.close() }
        let missing = await Self.refusal { try await anonymous.connect() }
        #expect(missing?.code == .unauthenticated)
        #expect(missing?.message == "this server requires a token (hkq --token or HKQ_TOKEN)")
        // The token with its last hex digit changed (the old way kept it whenever the last digit was 0 and the one
        // before it was not, so one run in sixteen "refused" a valid token).
        var wrong = identities[1].token
        let last = wrong.removeLast()
        wrong.append(last == "0" ? "1" : "0")
        #expect(wrong != identities[1].token)
        var elapsed: [Duration] = []
        // Text not shaped like a token is refused by the client itself: nothing is sent, nothing throttled.
        let malformed = HealthClient(ClientConfiguration(port: hkd.port, token: "nonsense", retry: .none))
        defer { malformed.close() }
        let local = await Self.refusal { try await malformed.connect() }
        #expect(local?.code == .unauthenticated && local?.origin == .local)
        #expect(local?.message.hasPrefix("the token is not shaped like an hkd token") == true)
        for token in [wrong, wrong, wrong, wrong, wrong, wrong] {
            let client = HealthClient(ClientConfiguration(port: hkd.port, token: token, retry: .none))
            defer { client.close() }
            let start = ContinuousClock.now
            let error = await Self.refusal { try await client.connect() }
            elapsed.append(ContinuousClock.now - start)
            #expect(error?.code == .unauthenticated)
            #expect(error?.message == "the token is not valid")
        }
        // The missing token was failure 1, so these waited 200, 400, 800, 1600, 3200 and 5000 ms.
        #expect(elapsed[3] >= .milliseconds(1500), "\(elapsed)")
        #expect(elapsed[5] >= .milliseconds(4500), "\(elapsed)")
        #expect(elapsed[0] < .milliseconds(1500), "\(elapsed)")
        // A right token still gets in at once, and resets the count.
        let reader = hkd.client(token: identities[1].token)
        defer { reader.close() }
        #expect(try await reader.samples("stepCount", subject: "anna").count == 13)

        await hkd.stop()
        var files: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: hkd.dataDirectory)
        while let name = enumerator?.nextObject() as? String { files.append(name) }
        #expect(files.contains("identities.json"))
        for token in identities.map(\.token) + [wrong] {
            let secret = String(token.split(separator: "_").last!)
            #expect(!hkd.logText.contains(secret), "a token secret is in the log")
            for name in files where name != "admin.token" {
                let path = hkd.dataDirectory + "/" + name
                guard let data = FileManager.default.contents(atPath: path) else { continue }
                #expect(!String(decoding: data, as: UTF8.self).contains(secret), "a token secret is in \(name)")
            }
        }
        // identities.json keeps salts and verifiers, never the salted token (enough to compute proofs).
        let identityFile = try String(contentsOfFile: hkd.dataDirectory + "/identities.json", encoding: .utf8)
        let stored = try #require(
            try JSONSerialization.jsonObject(with: Data(identityFile.utf8)) as? [String: Any])
        #expect(stored["format"] as? Int == 2)
        let entries = try #require(stored["identities"] as? [[String: Any]])
        for token in identities.map(\.token) {
            let parsed = try #require(AccessToken(token))
            let entry = try #require(entries.first { $0["id"] as? Int == Int(parsed.identityID) })
            let salt = try #require(Hex.decode(entry["salt"] as? String ?? ""))
            let salted = AccessToken.saltedToken(secret: parsed.secret, salt: salt)
            #expect(!identityFile.contains(Hex.encode(salted)), "the salted token of \(entry["name"] ?? "?") is stored")
            #expect(entry["storedKey"] as? String == Hex.encode(TokenVerifier(saltedToken: salted).storedKey))
            #expect(entry["tokenHash"] == nil)
        }
        let permissions =
            try FileManager.default.attributesOfItem(atPath: hkd.dataDirectory + "/admin.token")[.posixPermissions]
            as? Int
        #expect(permissions == 0o600)
        #expect(hkd.logText.contains("\(hkd.dataDirectory)/admin.token (mode 0600)"))
    }

    @Test("hkd refuses to start when admin.token is readable by others")
    func refusesReadableTokenFile() async throws {
        let hkd = try await TestServer()
        await hkd.stop()
        let path = hkd.dataDirectory + "/admin.token"
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        do {
            _ = try await hkd.restart()
            Issue.record("hkd started with a world-readable token file")
        } catch let error as HealthError {
            #expect(error.message.contains("\(path) is readable by other users (mode 644)"), "\(error.message)")
        }
    }
}
