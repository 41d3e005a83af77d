import Foundation
import HealthClient
import HealthModel
import HealthWire
import TestSupport
import Testing

/// Authorization through the real hkd (HEALTHKIT.md §10, SECURITY.md): tokens, per-type share and read grants,
/// subjects, HealthKit's read rule, revocation, the failure throttle and what reaches disk and logs.
@Suite("hkd authorization", .serialized)
struct AuthorizationTests {
    static let t0: Timestamp = 1_704_067_200_000_000  // 2024-01-01T00:00:00Z
    static let source = SourceInfo(name: "Watch", bundleIdentifier: "com.apple.health.watch")

    /// `count` samples of `type` for `subject`, one a minute from `offset` minutes after t0, each of `value`.
    static func samples(_ type: String, subject: String, count: Int, value: Double, offset: Int = 0) throws -> [Sample]
    {
        let quantityType = try QuantityType.named(type)
        return (0..<count).map { i in
            let start = t0 + Int64(offset + i) * Micros.minute
            return Sample(
                subject: subject, type: quantityType, start: start, end: start + Micros.minute, value: value,
                unit: quantityType.canonicalUnit, source: source)
        }
    }

    /// An identity of the test matrix: its spec and the rule the server must apply.
    struct Identity: Sendable {
        var spec: IdentitySpec
        var token = ""

        func allows(subject: String) -> Bool { spec.subjects.isEmpty || spec.subjects.contains(subject) }
        func can(_ kind: KeyPath<TypeGrant, Bool>, _ type: String) -> Bool {
            spec.grants.contains { ($0.type == "*" || $0.type == type) && $0[keyPath: kind] }
        }
    }

    /// What was stored, per writer name, subject and type: (count, value of each sample).
    static let stored: [(writer: String, subject: String, type: String, count: Int, value: Double)] = [
        ("admin", "anna", "stepCount", 10, 1), ("admin", "ben", "stepCount", 5, 1),
        ("admin", "anna", "heartRate", 4, 1), ("admin", "ben", "heartRate", 2, 1),
        ("writer", "anna", "stepCount", 3, 100), ("writer", "ben", "heartRate", 2, 100),
    ]

    /// The samples `identity` must see of `subject`'s `type`: all with read permission, else only its own.
    static func visible(_ identity: Identity, subject: String, type: String) -> (count: Int, sum: Double) {
        let rows = stored.filter {
            $0.subject == subject && $0.type == type && (identity.can(\.read, type) || $0.writer == identity.spec.name)
        }
        return (rows.reduce(0) { $0 + $1.count }, rows.reduce(0) { $0 + Double($1.count) * $1.value })
    }

    /// Starts hkd, creates the matrix identities with the admin token and stores ``stored``.
    static func populatedServer() async throws -> (TestServer, [Identity]) {
        let hkd = try await TestServer()
        var identities = [
            Identity(
                spec: IdentitySpec(
                    name: "admin", grants: [TypeGrant(type: "*", share: true, read: true)], isAdmin: true),
                token: hkd.token),
            Identity(
                spec: IdentitySpec(
                    name: "reader", subjects: ["anna"], grants: [TypeGrant(type: "stepCount", share: true, read: true)])
            ),
            Identity(
                spec: IdentitySpec(
                    name: "writer", subjects: ["anna", "ben"],
                    grants: [
                        TypeGrant(type: "stepCount", share: true, read: false),
                        TypeGrant(type: "heartRate", share: true, read: false),
                    ])),
            Identity(
                spec: IdentitySpec(name: "heart", grants: [TypeGrant(type: "heartRate", share: false, read: true)])),
        ]
        let admin = hkd.client()
        defer { admin.close() }
        for index in identities.indices.dropFirst() {
            let result = try await admin.administer(.create(identities[index].spec))
            #expect(result.identities.map(\.spec) == [identities[index].spec])
            #expect(result.token.hasPrefix("hkd1_"))
            identities[index].token = result.token
        }
        for entry in stored {
            let identity = try #require(identities.first { $0.spec.name == entry.writer })
            let client = hkd.client(token: identity.token)
            defer { client.close() }
            let offset = entry.writer == "admin" ? 0 : 100
            _ = try await client.insert(
                try samples(entry.type, subject: entry.subject, count: entry.count, value: entry.value, offset: offset))
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

    @Test("identities × subjects × types: samples, statistics and collections show exactly what the grants allow")
    func readMatrix() async throws {
        let (hkd, identities) = try await Self.populatedServer()
        for identity in identities {
            let client = hkd.client(token: identity.token)
            defer { client.close() }
            for subject in ["anna", "ben", "cara"] {
                for type in ["stepCount", "heartRate"] {
                    let context = "\(identity.spec.name) reading \(subject)/\(type)"
                    let options: StatisticsOptions = type == "stepCount" ? [.cumulativeSum] : [.discreteAverage]
                    let collection = CollectionQuery(
                        subject: subject, type: type, options: options, anchor: Self.t0,
                        interval: CalendarInterval(1, .day),
                        timeZone: "UTC")
                    guard identity.allows(subject: subject) else {
                        for error in [
                            await Self.refusal { try await client.samples(type, subject: subject) },
                            await Self.refusal {
                                try await client.statistics(type, subject: subject, options: options)
                            },
                            await Self.refusal { try await client.collection(collection) },
                        ] {
                            #expect(error?.code == .forbidden, "\(context)")
                            #expect(
                                error?.message
                                    == "identity \"\(identity.spec.name)\" may not access subject \"\(subject)\"",
                                "\(context)")
                        }
                        continue
                    }
                    let expected = Self.visible(identity, subject: subject, type: type)
                    let rows = try await client.samples(type, subject: subject)
                    #expect(rows.count == expected.count, "\(context)")
                    let statistics = try await client.statistics(type, subject: subject, options: options)
                    let buckets = try await client.collection(collection).buckets
                    if expected.count == 0 {
                        // Exactly what an empty subject answers (no data): nothing says that other samples exist.
                        #expect(statistics == nil, "\(context)")
                        let reply = await Self.refusal {
                            try await client.send(StatisticsQuery(subject: subject, type: type, options: options))
                        }
                        #expect(reply?.code == .noData, "\(context)")
                        #expect(
                            reply?.message == "no \(type) sample of subject \"\(subject)\" matches the query",
                            "\(context)")
                        #expect(buckets.isEmpty, "\(context)")
                    } else {
                        if type == "stepCount" {
                            let sum = statistics?.statistics.figures.sum
                            #expect(sum == expected.sum, "\(context)")
                            #expect(buckets.compactMap(\.figures.sum).reduce(0, +) == expected.sum, "\(context)")
                        } else {
                            let average = statistics?.statistics.figures.average
                            #expect(average == expected.sum / Double(expected.count), "\(context)")
                            #expect(buckets.count == 1, "\(context)")
                        }
                    }
                }
            }
        }
        await hkd.stop()
    }

    @Test(
        "identities × subjects × types: inserts and deletes need the share grant and the subject; deletes reach only own samples"
    )
    func writeMatrix() async throws {
        let (hkd, identities) = try await Self.populatedServer()
        for identity in identities {
            let client = hkd.client(token: identity.token)
            defer { client.close() }
            for subject in ["anna", "ben", "cara"] {
                for type in ["stepCount", "heartRate"] {
                    let context = "\(identity.spec.name) writing \(subject)/\(type)"
                    let insert = await Self.refusal {
                        try await client.insert(
                            try Self.samples(type, subject: subject, count: 1, value: 7, offset: 500))
                    }
                    if !identity.allows(subject: subject) {
                        #expect(insert?.code == .forbidden, "\(context)")
                        #expect(
                            insert?.message
                                == "identity \"\(identity.spec.name)\" may not access subject \"\(subject)\"",
                            "\(context)")
                    } else if !identity.can(\.share, type) {
                        #expect(insert?.code == .forbidden, "\(context)")
                        #expect(
                            insert?.message == "identity \"\(identity.spec.name)\" has no share permission for \(type)",
                            "\(context)")
                    } else {
                        #expect(insert == nil, "\(context)")
                    }
                }
            }
        }
        // Deleting everything deletes only what the identity wrote (admins: everything).
        let writer = hkd.client(token: identities[2].token)
        defer { writer.close() }
        #expect(try await writer.delete("stepCount", subject: "anna", .filter(.all)) == 3 + 1)
        #expect(try await writer.delete("heartRate", subject: "ben", .filter(.all)) == 2 + 1)
        let reader = hkd.client(token: identities[1].token)
        defer { reader.close() }
        #expect(
            await Self.refusal { try await reader.delete("heartRate", subject: "anna", .filter(.all)) }?.code
                == .forbidden)
        #expect(
            await Self.refusal { try await reader.delete("stepCount", subject: "ben", .filter(.all)) }?.code
                == .forbidden)
        let heart = hkd.client(token: identities[3].token)
        defer { heart.close() }
        #expect(
            await Self.refusal { try await heart.delete("heartRate", subject: "anna", .filter(.all)) }?.code
                == .forbidden)
        let admin = hkd.client()
        defer { admin.close() }
        #expect(try await admin.samples("stepCount", subject: "anna").count == 10 + 1 + 1)  // admin's, reader's
        #expect(try await admin.delete("stepCount", subject: "anna", .filter(.all)) == 12)
        await hkd.stop()
    }

    @Test("authorization status is about sharing only; admin requests need an admin; server info hides contents")
    func statusAndAdministration() async throws {
        let (hkd, identities) = try await Self.populatedServer()
        let reader = hkd.client(token: identities[1].token)
        defer { reader.close() }
        #expect(
            try await reader.authorizationStatus(["stepCount", "heartRate"]).map(\.state) == [
                .sharingAuthorized, .notDetermined,
            ])
        let heart = hkd.client(token: identities[3].token)
        defer { heart.close() }
        #expect(
            try await heart.authorizationStatus(["heartRate", "stepCount"]).map(\.state) == [
                .sharingDenied, .notDetermined,
            ])
        let refused = await Self.refusal { try await reader.administer(.list) }
        #expect(refused?.code == .forbidden)
        #expect(refused?.message == "identity \"reader\" may not administer identities: it is not an admin")
        let info = try await reader.serverInfo()
        #expect(info.subjects == 0 && info.samplesPerType.isEmpty)
        let admin = hkd.client()
        defer { admin.close() }
        #expect(try await admin.serverInfo().subjects == 2)
        let listed = try await admin.administer(.list).identities
        #expect(listed.map(\.spec.name) == ["admin", "reader", "writer", "heart"])
        #expect(listed.allSatisfy { !$0.revoked })
        let duplicate = await Self.refusal { try await admin.administer(.create(IdentitySpec(name: "reader"))) }
        #expect(duplicate?.code == .invalidArgument)
        let lastAdmin = await Self.refusal { try await admin.administer(.revoke(name: "admin")) }
        #expect(lastAdmin?.message == "the change would leave no admin identity")
        // An update takes effect on the next request of an open connection.
        _ = try await admin.administer(
            .update(IdentitySpec(name: "reader", subjects: ["ben"], grants: identities[1].spec.grants)))
        #expect(await Self.refusal { try await reader.samples("stepCount", subject: "anna") }?.code == .forbidden)
        #expect(try await reader.samples("stepCount", subject: "ben").count == 5)
        await hkd.stop()
    }

    @Test("a revoked token fails on the next request of an open connection, which then closes, and at hello")
    func revocation() async throws {
        let (hkd, identities) = try await Self.populatedServer()
        let writer = HealthClient(ClientConfiguration(port: hkd.port, token: identities[2].token, retry: .none))
        defer { writer.close() }
        #expect(try await writer.samples("stepCount", subject: "anna").count == 3)
        let admin = hkd.client()
        defer { admin.close() }
        let revoked = try await admin.administer(.revoke(name: "writer")).identities
        #expect(revoked.first?.revoked == true)
        let next = await Self.refusal { try await writer.samples("stepCount", subject: "anna") }
        #expect(next?.code == .tokenRevoked)
        #expect(next?.message == "the identity \"writer\" was revoked")
        let again = HealthClient(ClientConfiguration(port: hkd.port, token: identities[2].token, retry: .none))
        defer { again.close() }
        let hello = await Self.refusal { try await again.connect() }
        #expect(hello?.code == .tokenRevoked)
        // Revocation survives a restart.
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
