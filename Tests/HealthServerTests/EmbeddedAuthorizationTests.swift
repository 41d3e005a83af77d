import HealthModel
import HealthWire
import TestSupport
import Testing

/// Authorization of every request kind the matrix touches, through the real connection logic and dispatcher
/// in process (``EmbeddedServer``): per-type share and read grants, subjects, HealthKit's read rule,
/// administration and revocation on an open connection. What needs hkd itself (a restart, the failure
/// throttle's delays, what reaches disk and the log) is in IntegrationTests' AuthorizationTests.
@Suite("authorization in process")
struct EmbeddedAuthorizationTests {
    typealias Identity = AuthorizationMatrix.Identity

    /// A server with the matrix identities, made with the admin token, and ``AuthorizationMatrix/stored`` stored.
    static func populatedServer() throws -> (EmbeddedServer, [Identity]) {
        let server = try EmbeddedServer()
        var identities = AuthorizationMatrix.identities(adminToken: server.token)
        let admin = try server.session()
        for index in identities.indices.dropFirst() {
            let result = try admin.send(AdminRequest(.create(identities[index].spec)))
            #expect(result.identities.map(\.spec) == [identities[index].spec])
            #expect(result.token.hasPrefix("hkd1_"))
            identities[index].token = result.token
        }
        for entry in AuthorizationMatrix.stored {
            let identity = try #require(identities.first { $0.spec.name == entry.writer })
            let session = try server.session(token: identity.token)
            try session.insert(
                try AuthorizationMatrix.samples(
                    entry.type, subject: entry.subject, count: entry.count, value: entry.value,
                    offset: AuthorizationMatrix.offset(of: entry.writer)))
        }
        return (server, identities)
    }

    /// The error a request failed with, or `nil` when it succeeded.
    static func refusal<T>(_ body: () throws -> T) -> HealthError? {
        do {
            _ = try body()
            return nil
        } catch let error as HealthError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    /// How many samples a sample query answers.
    static func rowCount(_ session: EmbeddedConnection, _ type: String, subject: String) throws -> Int {
        try session.sendStreamed(SampleQuery(subject: subject, type: type)).reduce(0) { $0 + $1.batch.count }
    }

    @Test("identities × subjects × types: samples, statistics and collections show exactly what the grants allow")
    func readMatrix() throws {
        let (server, identities) = try Self.populatedServer()
        for identity in identities {
            let session = try server.session(token: identity.token)
            for subject in ["anna", "ben", "cara"] {
                for type in ["stepCount", "heartRate"] {
                    let context = "\(identity.spec.name) reading \(subject)/\(type)"
                    let options: StatisticsOptions = type == "stepCount" ? [.cumulativeSum] : [.discreteAverage]
                    let statisticsQuery = StatisticsQuery(subject: subject, type: type, options: options)
                    let collection = CollectionQuery(
                        subject: subject, type: type, options: options, anchor: AuthorizationMatrix.t0,
                        interval: CalendarInterval(1, .day), timeZone: "UTC")
                    guard identity.allows(subject: subject) else {
                        for error in [
                            Self.refusal { try session.sendStreamed(SampleQuery(subject: subject, type: type)) },
                            Self.refusal { try session.send(statisticsQuery) },
                            Self.refusal { try session.sendStreamed(collection) },
                        ] {
                            #expect(error?.code == .forbidden, "\(context)")
                            #expect(
                                error?.message
                                    == "identity \"\(identity.spec.name)\" may not access subject \"\(subject)\"",
                                "\(context)")
                        }
                        continue
                    }
                    let expected = AuthorizationMatrix.visible(identity, subject: subject, type: type)
                    #expect(try Self.rowCount(session, type, subject: subject) == expected.count, "\(context)")
                    let buckets = try session.sendStreamed(collection).flatMap(\.buckets)
                    if expected.count == 0 {
                        // Exactly what an empty subject answers (no data): nothing says that other samples exist.
                        let reply = Self.refusal { try session.send(statisticsQuery) }
                        #expect(reply?.code == .noData, "\(context)")
                        #expect(
                            reply?.message == "no \(type) sample of subject \"\(subject)\" matches the query",
                            "\(context)")
                        #expect(buckets.isEmpty, "\(context)")
                    } else if type == "stepCount" {
                        let sum = try session.send(statisticsQuery).statistics.figures.sum
                        #expect(sum == expected.sum, "\(context)")
                        #expect(buckets.compactMap(\.figures.sum).reduce(0, +) == expected.sum, "\(context)")
                    } else {
                        let average = try session.send(statisticsQuery).statistics.figures.average
                        #expect(average == expected.sum / Double(expected.count), "\(context)")
                        #expect(buckets.count == 1, "\(context)")
                    }
                }
            }
        }
    }

    @Test(
        "identities × subjects × types: inserts and deletes need the share grant and the subject; deletes reach only own samples"
    )
    func writeMatrix() throws {
        let (server, identities) = try Self.populatedServer()
        for identity in identities {
            let session = try server.session(token: identity.token)
            for subject in ["anna", "ben", "cara"] {
                for type in ["stepCount", "heartRate"] {
                    let context = "\(identity.spec.name) writing \(subject)/\(type)"
                    let insert = Self.refusal {
                        try session.insert(
                            try AuthorizationMatrix.samples(type, subject: subject, count: 1, value: 7, offset: 500))
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
        func delete(_ session: EmbeddedConnection, _ type: String, _ subject: String) throws -> UInt64 {
            try session.send(Delete(subject: subject, type: type, selection: .filter(.all))).deleted
        }
        let writer = try server.session(token: identities[2].token)
        #expect(try delete(writer, "stepCount", "anna") == 3 + 1)
        #expect(try delete(writer, "heartRate", "ben") == 2 + 1)
        let reader = try server.session(token: identities[1].token)
        #expect(Self.refusal { try delete(reader, "heartRate", "anna") }?.code == .forbidden)
        #expect(Self.refusal { try delete(reader, "stepCount", "ben") }?.code == .forbidden)
        let heart = try server.session(token: identities[3].token)
        #expect(Self.refusal { try delete(heart, "heartRate", "anna") }?.code == .forbidden)
        let admin = try server.session()
        #expect(try Self.rowCount(admin, "stepCount", subject: "anna") == 10 + 1 + 1)  // admin's, reader's
        #expect(try delete(admin, "stepCount", "anna") == 12)
    }

    @Test("authorization status is about sharing only; admin requests need an admin; server info hides contents")
    func statusAndAdministration() throws {
        let (server, identities) = try Self.populatedServer()
        let reader = try server.session(token: identities[1].token)
        #expect(
            try reader.send(AuthorizationStatusQuery(types: ["stepCount", "heartRate"], subject: "")).statuses.map(
                \.state) == [.sharingAuthorized, .notDetermined])
        let heart = try server.session(token: identities[3].token)
        #expect(
            try heart.send(AuthorizationStatusQuery(types: ["heartRate", "stepCount"], subject: "")).statuses.map(
                \.state) == [.sharingDenied, .notDetermined])
        let refused = Self.refusal { try reader.send(AdminRequest(.list)) }
        #expect(refused?.code == .forbidden)
        #expect(refused?.message == "identity \"reader\" may not administer identities: it is not an admin")
        let info = try reader.send(ServerInfoQuery())
        #expect(info.subjects == 0 && info.samplesPerType.isEmpty)
        let admin = try server.session()
        #expect(try admin.send(ServerInfoQuery()).subjects == 2)
        let listed = try admin.send(AdminRequest(.list)).identities
        #expect(listed.map(\.spec.name) == ["admin", "reader", "writer", "heart"])
        #expect(listed.allSatisfy { !$0.revoked })
        let duplicate = Self.refusal { try admin.send(AdminRequest(.create(IdentitySpec(name: "reader")))) }
        #expect(duplicate?.code == .invalidArgument)
        let lastAdmin = Self.refusal { try admin.send(AdminRequest(.revoke(name: "admin"))) }
        #expect(lastAdmin?.message == "the change would leave no admin identity")
        // An update takes effect on the next request of an open connection.
        _ = try admin.send(
            AdminRequest(.update(IdentitySpec(name: "reader", subjects: ["ben"], grants: identities[1].spec.grants))))
        #expect(
            Self.refusal { try reader.sendStreamed(SampleQuery(subject: "anna", type: "stepCount")) }?.code
                == .forbidden)
        #expect(try Self.rowCount(reader, "stepCount", subject: "ben") == 5)
    }

    @Test("a revoked token fails on the next request of an open connection, and at hello")
    func revocation() throws {
        let (server, identities) = try Self.populatedServer()
        let writer = try server.session(token: identities[2].token)
        #expect(try Self.rowCount(writer, "stepCount", subject: "anna") == 3)
        let admin = try server.session()
        let revoked = try admin.send(AdminRequest(.revoke(name: "writer"))).identities
        #expect(revoked.first?.revoked == true)
        let next = Self.refusal { try Self.rowCount(writer, "stepCount", subject: "anna") }
        #expect(next?.code == .tokenRevoked)
        #expect(next?.message == "the identity \"writer\" was revoked")
        #expect(Self.refusal { try server.session(token: identities[2].token) }?.code == .tokenRevoked)
    }
}
