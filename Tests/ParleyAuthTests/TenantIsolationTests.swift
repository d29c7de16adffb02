import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

@testable import ParleyAuth

/// A user of app A can neither read nor touch anything of app B, with any token it can obtain.
@Suite("Tenant isolation")
struct TenantIsolationTests {
    @Test func appsSeeNothingOfEachOther() async throws {
        try await withLiveApp { live in
            let (appA, secretA) = try await live.createApp(name: "A")
            let (appB, _) = try await live.createApp(name: "B")
            let client = live.client()
            // The same username in both apps: two different users.
            let a = try Session(try await client.register(appKey: appA.appKey, username: "alice"))
            let b = try Session(
                try await client.register(appKey: appB.appKey, username: "alice", password: "b's password"))
            #expect(a.userId != b.userId)

            // A's access token with B's app key.
            let crossed = try await client.get(
                "/api/users/me", token: a.accessToken, headers: ["X-App-Key": appB.appKey])
            #expect(crossed.status == 403)
            #expect(crossed.code == 1041)
            // B's users are not found through A's tokens, one by one or in bulk.
            #expect(try await client.get("/api/users/\(b.userId)", token: a.accessToken).status == 404)
            let lookup = try await client.post(
                "/api/users/lookup", json: ["ids": [b.userId, a.userId]], token: a.accessToken)
            #expect((lookup.data["users"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [a.userId])
            // B's sessions can be neither listed nor ended.
            let listed = try await client.get("/api/auth/sessions", token: a.accessToken)
            #expect(
                (listed.data["sessions"] as? [[String: Any]])?.contains { $0["id"] as? String == b.sessionId } == false)
            #expect(try await client.delete("/api/auth/sessions/\(b.sessionId)", token: a.accessToken).status == 404)
            #expect(try await client.get("/api/users/me", token: b.accessToken).status == 200)
            // A's refresh token presented for app B is unknown there (and stays valid for A).
            #expect(try await client.refresh(a.refreshToken, appKey: appB.appKey).code == 1037)
            #expect(try await client.refresh(a.refreshToken, appKey: appA.appKey).status == 200)
            // A's credentials do not log in to B; A's secret does not sign for B.
            #expect(try await client.login(appKey: appB.appKey, username: "alice").code == 1035)
            let signed = try await SignedRequestTests.signedLogin(
                client, appKey: appB.appKey, secret: secretA,
                userId: b.userId)
            #expect(signed.code == 1038)
            // An IM token of A names A's user only.
            let principal = try live.auth.authenticator.verifyIMToken(a.imToken)
            #expect(principal.appId == appA.id && principal.userId == a.userId)
        }
    }

    @Test func tokenOfADeletedAppIsRefused() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let session = try Session(try await live.client().register(appKey: app.appKey, username: "zed"))
            _ = try await live.app.database.query("DELETE FROM apps WHERE id = \(app.id)")
            try await live.app.database.notify("parley_app_changed", payload: String(app.id))
            let refused = try await eventually {
                try await live.client().get("/api/users/me", token: session.accessToken).code == 1030
            }
            #expect(refused != nil)
        }
    }
}
