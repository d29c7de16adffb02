import Foundation
import ParleyApp
import ParleyLiveSupport
import ParleyTestSupport
import Testing

@testable import ParleyAuth

/// `parley user ban|unban`: a ban keeps the data, ends every session everywhere and refuses logins (1043).
@Suite("Account bans")
struct AccountBanTests {
    static func run(_ arguments: [String], _ configuration: Configuration) async throws -> [String] {
        try await CommandOutput.lines { try await UserCommand.run(arguments, configuration: configuration, output: $0) }
    }

    @Test func aBanEndsEverySessionAndRefusesLoginsUntilLifted() async throws {
        try await withDatabase { url in
            let live = try await LiveApp(databaseURL: url)
            let configuration = try LiveApp.configuration(databaseURL: url, masterKeyHex: live.masterKeyHex)
            do {
                let (app, secret) = try await live.createApp()
                let client = live.client()
                let recorder = AccountConflictTests.EventRecorder(live.auth.events)
                let alice = try Session(try await client.register(appKey: app.appKey, username: "alice"))
                let tablet = try Session(
                    try await client.login(appKey: app.appKey, username: "alice", platform: "android"))
                let signed: [String: Any] = ["appKey": app.appKey, "userId": "tb_9", "platform": "ios"]
                let external = try Session(try await live.signedLogin(appKey: app.appKey, secret: secret, signed))

                let banned = try await Self.run(["ban", "--app", app.appKey, alice.userId], configuration)
                #expect(banned == ["banned \(alice.userId); 2 session(s) ended"])
                _ = try await Self.run(["ban", "--app", app.appKey, "tb_9"], configuration)
                // The server hears it through NOTIFY: every session's tokens are refused, with the reason.
                let heard = try await eventually { recorder.all.count == 3 }
                #expect(heard != nil)
                #expect(Set(recorder.all.map(\.sessionId)) == [alice.sessionId, tablet.sessionId, external.sessionId])
                #expect(recorder.all.allSatisfy { $0.reason == .banned })
                #expect(try await client.get("/api/users/me", token: alice.accessToken).code == 1034)
                #expect(try await client.refresh(tablet.refreshToken).code == 1034)

                // The right password learns of the ban (1043); a wrong one learns nothing more than before.
                let refused = try await client.login(appKey: app.appKey, username: "alice")
                #expect(refused.status == 403)
                #expect(refused.code == 1043)
                #expect(
                    try await client.login(appKey: app.appKey, username: "alice", password: "wrong pass").code == 1035)
                let signedRefused = try await live.signedLogin(appKey: app.appKey, secret: secret, signed)
                #expect(signedRefused.code == 1043)
                // Nothing was opened by the refused logins; the data stays.
                let open = try await live.app.database.query(
                    "SELECT count(*) FROM sessions WHERE app_id = \(app.id) AND ended_at IS NULL")
                #expect(try open[0].decode(0, as: Int.self) == 0)
                let users = try await live.app.database.query("SELECT count(*) FROM users WHERE app_id = \(app.id)")
                #expect(try users[0].decode(0, as: Int.self) == 2)

                #expect(
                    try await Self.run(["unban", "--app", app.appKey, alice.userId], configuration) == [
                        "unbanned \(alice.userId)"
                    ])
                #expect(try await client.login(appKey: app.appKey, username: "alice").status == 200)
                #expect(try await live.signedLogin(appKey: app.appKey, secret: secret, signed).code == 1043)

                // Unknown users, apps and arguments are usage errors; nothing changes.
                for bad in [
                    ["ban", "--app", app.appKey, "nobody"], ["ban", "--app", "ak_nope", alice.userId],
                    ["ban", alice.userId], ["ban", "--app", app.appKey], ["suspend", "--app", app.appKey, "x"],
                ] {
                    await #expect(throws: AppCommand.UsageError.self, "\(bad)") {
                        try await Self.run(bad, configuration)
                    }
                }
            } catch {
                await live.stop()
                throw error
            }
            await live.stop()
        }
    }
}
