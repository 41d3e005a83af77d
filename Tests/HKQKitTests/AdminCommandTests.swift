import Foundation
import HKQKit
import Testing

/// `hkq admin` and `hkq auth` against a live hkd.
@Suite("hkq admin and auth", .serialized, .liveServer)
struct AdminCommandTests {
    @Test("admin create takes the workout and correlation types as grant types; a misspelt type is refused")
    func objectGrantTypes() async throws {
        let created = try await runLive(
            [
                "admin", "create", "bp-sync", "--share", "workout,bloodPressure", "--read",
                "HKCorrelationTypeIdentifierFood",
            ],
            subject: "anna")
        #expect(created.status == 0, "\(created.err)")
        let list = try await runLive(["admin", "list", "--format", "csv"], subject: "anna")
        #expect(list.out.contains("bp-sync,false,"), "\(list.out)")
        #expect(list.out.contains("\"workout,bloodPressure\",food"), "\(list.out)")
        let wrong = try await runLive(["admin", "create", "typo", "--share", "bloodPresure"], subject: "anna")
        #expect(wrong.status != 0 && wrong.err.contains("bloodPresure"), "\(wrong.err)")
    }

    @Test("admin create prints a token once; auth status with it; list; update; revoke ends it")
    func lifecycle() async throws {
        let live = try #require(LiveServer.current)
        let created = try await runLive(
            [
                "admin", "create", "sync", "--subjects", "anna,ben", "--share", "stepCount,heartRate", "--read",
                "stepCount",
            ],
            subject: "anna")
        #expect(created.status == 0, "\(created.err)")
        let token = created.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("hkd1_") && !token.contains("\n"))
        #expect(created.err == "created identity \"sync\"; store its token now, it is not shown again\n")

        let status = await runHKQ(
            [
                "auth", "status", "stepCount", "heartRate", "bodyMass", "--server", live.address, "--token", token,
                "--format", "csv", "--subject", "anna",
            ])
        #expect(status.status == 0, "\(status.err)")
        #expect(
            status.out
                == "type,status\nstepCount,sharingAuthorized\nheartRate,sharingAuthorized\nbodyMass,notDetermined\n")
        // Status is per subject: this identity may write nothing for carl.
        let elsewhere = await runHKQ(
            [
                "auth", "status", "stepCount", "--server", live.address, "--token", token, "--format", "csv",
                "--subject", "carl",
            ])
        #expect(elsewhere.out == "type,status\nstepCount,sharingDenied\n", "\(elsewhere.err)")

        let list = try await runLive(["admin", "list", "--format", "csv"], subject: "anna")
        #expect(list.out.contains("sync,false,\"anna,ben\",\"stepCount,heartRate\",stepCount,"), "\(list.out)")
        #expect(!list.out.contains(token) && !list.out.contains(live.token))

        let update = try await runLive(["admin", "update", "sync", "--share", "*", "--format", "csv"], subject: "anna")
        #expect(update.status == 0, "\(update.err)")
        #expect(update.out.contains("sync,false,*,*,,"), "\(update.out)")

        let forbidden = await runHKQ(["admin", "list", "--server", live.address, "--token", token])
        #expect(forbidden.status == 77, "authorization refused")
        #expect(forbidden.err == "error: identity \"sync\" may not administer identities: it is not an admin\n")

        #expect(try await runLive(["admin", "revoke", "sync"], subject: "anna").status == 0)
        let revoked = await runHKQ(["auth", "status", "stepCount", "--server", live.address, "--token", token])
        #expect(revoked.status == 77, "authentication refused")
        #expect(revoked.err == "error: the identity \"sync\" was revoked\n")
    }

    @Test("admin create takes the workout, characteristics and activitySummary types; their grants then apply")
    func profileGrants() async throws {
        let live = try #require(LiveServer.current)
        let created = try await runLive(
            [
                "admin", "create", "profile-reader", "--subjects", "grants-anna", "--read",
                "characteristics,HKActivitySummaryTypeIdentifier,workout",
            ],
            subject: "grants-anna")
        #expect(created.status == 0, "\(created.err)")
        let token = created.out.trimmingCharacters(in: .whitespacesAndNewlines)
        let list = try await runLive(["admin", "list", "--format", "csv"], subject: "grants-anna")
        #expect(
            list.out.contains("profile-reader,false,grants-anna,,\"characteristics,activitySummary,workout\","),
            "\(list.out)")
        let set = try await runLive(["characteristics", "set", "wheelchairUse=no"], subject: "grants-anna")
        #expect(set.status == 0, "\(set.err)")
        let read = await runHKQ(
            [
                "characteristics", "--server", live.address, "--token", token, "--subject", "grants-anna", "--format",
                "csv",
            ])
        #expect(read.status == 0 && read.out.contains("wheelchairUse,no"), "\(read.err)\(read.out)")
        let write = await runHKQ(
            [
                "characteristics", "set", "wheelchairUse=yes", "--server", live.address, "--token", token,
                "--subject", "grants-anna",
            ])
        #expect(write.status == 77 && write.err.contains("no share permission for characteristics"), "\(write.err)")
        let unknown = try await runLive(
            ["admin", "create", "typo", "--read", "charactristics"], subject: "grants-anna")
        #expect(unknown.status == 65 && unknown.err.contains("charactristics"), "\(unknown.err)")
    }

    @Test("without a token hkq is refused with a hint, and reads ./hkd-data/admin.token only for a local server")
    func tokenDiscovery() async throws {
        let live = try #require(LiveServer.current)
        // Not the working directory's ./hkd-data: README's quick start may have created a real one there.
        let noToken = HKQ(commands: HKQ.commands, localTokenPath: live.directory.path + "/no-such/admin.token")
        let refused = await runHKQ(
            ["auth", "status", "stepCount", "--server", live.address], environment: [:], program: noToken)
        #expect(refused.status == 77)
        #expect(refused.err.contains("this server requires a token"), "\(refused.err)")
        #expect(refused.err.contains("pass --token or set HKQ_TOKEN"))
        #expect(
            LocalToken.isLoopback("127.0.0.1") && LocalToken.isLoopback("localhost") && LocalToken.isLoopback("::1"))
        #expect(!LocalToken.isLoopback("db.example.org") && !LocalToken.isLoopback("10.0.0.1"))
        let path = try live.file("admin.token", "  \(live.token)\n")
        #expect(LocalToken.read(path) == live.token)
        // A local server's token file is found by itself.
        let discovered = await runHKQ(
            ["auth", "status", "stepCount", "--server", live.address, "--subject", "anna"], environment: [:],
            program: HKQ(commands: HKQ.commands, localTokenPath: path))
        #expect(discovered.status == 0, "\(discovered.err)")
        #expect(LocalToken.read(live.directory.path + "/missing") == nil)
    }
}
