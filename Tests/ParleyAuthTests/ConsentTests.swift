import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

@testable import ParleyAuth

/// Code 1033 after a privacy-policy bump, until the user consents.
@Suite("Privacy consent")
struct ConsentTests {
    @Test func code1033UntilConsent() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp(privacyVersion: 1)
            let client = live.client()
            let session = try Session(try await client.register(appKey: app.appKey, username: "alice"))
            #expect(
                try await client.patch("/api/users/me", json: ["nickname": "A"], token: session.accessToken).status
                    == 200)

            // The app publishes version 2 (as `parley app update --privacy-version 2` does); NOTIFY brings it here.
            _ = try await live.auth.appRepository.update(appKey: app.appKey, privacyVersion: 2)
            #expect(try await eventually { live.auth.directory.app(id: app.id)?.privacyVersion == 2 } != nil)

            let blocked = try await client.patch("/api/users/me", json: ["nickname": "B"], token: session.accessToken)
            #expect(blocked.status == 403)
            #expect(blocked.code == 1033)
            #expect(blocked.message == "privacy policy updated, consent required")
            #expect(try await client.post("/api/im/auth/token", token: session.accessToken).code == 1033)
            // A refreshed token is no way around it.
            let refreshed = try Session(try await client.refresh(session.refreshToken))
            #expect(
                try await client.patch("/api/users/me", json: ["nickname": "B"], token: refreshed.accessToken).code
                    == 1033)

            // Exempt: profile reads, sessions, logout, the policy status and consent itself.
            #expect(try await client.get("/api/users/me", token: refreshed.accessToken).status == 200)
            #expect(try await client.get("/api/users/\(session.userId)", token: refreshed.accessToken).status == 200)
            #expect(try await client.get("/api/auth/sessions", token: refreshed.accessToken).status == 200)
            let status = try await client.get("/api/privacy", token: refreshed.accessToken)
            #expect(status.data["version"] as? Int == 2)
            #expect(status.data["consentedVersion"] as? Int == 1)
            #expect(status.data["consentRequired"] as? Bool == true)

            // Consent to an outdated version is refused; to the current one it lifts 1033 for every token.
            #expect(
                try await client.post("/api/privacy/consent", json: ["version": 1], token: refreshed.accessToken).code
                    == 1002)
            let consent = try await client.post(
                "/api/privacy/consent", json: ["version": 2], token: refreshed.accessToken)
            #expect(consent.status == 200)
            #expect(consent.data["version"] as? Int == 2)
            let newAccess = try #require(consent.string("accessToken"))
            #expect(try await client.patch("/api/users/me", json: ["nickname": "C"], token: newAccess).status == 200)
            #expect(
                try await client.patch("/api/users/me", json: ["nickname": "D"], token: refreshed.accessToken).status
                    == 200)
            #expect(try await client.post("/api/im/auth/token", token: refreshed.accessToken).status == 200)
            // New tokens carry the consented version.
            let claims = try live.auth.authenticator.tokens.verify(newAccess, audience: .api)
            #expect(claims.pv == 2)
        }
    }

    /// A signed login comes from the app's backend, which asks its users itself (seed 000 shows its own sheet on a
    /// 1033 and tells the IM server nothing): after a policy change, the user's next signed login is consented.
    @Test func aSignedLoginVouchesForThePolicyInForce() async throws {
        try await withLiveApp { live in
            let (app, secret) = try await live.createApp(privacyVersion: 1)
            let client = live.client()
            let login: [String: Any] = ["appKey": app.appKey, "userId": "tb_1", "platform": "ios", "deviceId": "d1"]
            let before = try Session(try await live.signedLogin(appKey: app.appKey, secret: secret, login))
            _ = try await live.auth.appRepository.update(appKey: app.appKey, privacyVersion: 2)
            #expect(try await eventually { live.auth.directory.app(id: app.id)?.privacyVersion == 2 } != nil)
            #expect(
                try await client.patch("/api/users/me", json: ["nickname": "A"], token: before.accessToken).code == 1033
            )

            let after = try Session(try await live.signedLogin(appKey: app.appKey, secret: secret, login))
            let changed = try await client.patch("/api/users/me", json: ["nickname": "B"], token: after.accessToken)
            #expect(changed.status == 200)
            #expect(changed.data["privacyVersion"] as? Int == 2)
            #expect(try live.auth.authenticator.tokens.verify(after.accessToken, audience: .api).pv == 2)
            // The consent is the user's: the token issued before the login passes too.
            #expect(
                try await client.patch("/api/users/me", json: ["nickname": "C"], token: before.accessToken).status
                    == 200)
        }
    }

    /// Consent and the IM-token renewal issue tokens for a session, never a way to outlive it: consent answers a
    /// token only while the presented one predates the policy, and no token outlives the session's refresh token.
    @Test func noTokenRenewsItself() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp(privacyVersion: 1)
            let client = live.client()
            let session = try Session(try await client.register(appKey: app.appKey, username: "carol"))
            // Consent not pending for this token: recorded again, no new token.
            let idle = try await client.post("/api/privacy/consent", json: ["version": 1], token: session.accessToken)
            #expect(idle.status == 200)
            #expect(idle.data["version"] as? Int == 1)
            #expect(idle.data.keys.contains("accessToken") && idle.data["accessToken"] is NSNull)
            #expect(idle.data["accessTokenExpiresAt"] is NSNull)

            // The session's refresh token runs out in a minute: nothing issued for it lasts longer.
            _ = try await live.app.database.query(
                """
                UPDATE refresh_tokens SET expires_at = now() + interval '60 seconds'
                WHERE session_id = \(session.sessionId)
                """)
            let limit = Date().addingTimeInterval(61)
            let im = try await client.post("/api/im/auth/token", token: session.accessToken)
            #expect(im.status == 200)
            let imClaims = try live.auth.authenticator.tokens.verify(try #require(im.string("token")), audience: .im)
            #expect(Double(imClaims.exp) <= limit.timeIntervalSince1970)

            _ = try await live.auth.appRepository.update(appKey: app.appKey, privacyVersion: 2)
            #expect(try await eventually { live.auth.directory.app(id: app.id)?.privacyVersion == 2 } != nil)
            let consent = try await client.post(
                "/api/privacy/consent", json: ["version": 2], token: session.accessToken)
            let consentToken = try #require(consent.string("accessToken"))
            let access = try live.auth.authenticator.tokens.verify(consentToken, audience: .api)
            #expect(access.pv == 2)
            #expect(Double(access.exp) <= limit.timeIntervalSince1970)

            // Once the refresh token has expired the session cannot be stretched at all.
            _ = try await live.app.database.query(
                """
                UPDATE refresh_tokens SET expires_at = now() - interval '1 second'
                WHERE session_id = \(session.sessionId)
                """)
            #expect(try await client.post("/api/im/auth/token", token: consentToken).code == 1034)
        }
    }

    @Test func newUsersAcceptTheCurrentPolicyWhenTheyRegister() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp(privacyVersion: 5)
            let client = live.client()
            let session = try Session(try await client.register(appKey: app.appKey, username: "bob"))
            #expect(
                try await client.patch("/api/users/me", json: ["nickname": "Bob"], token: session.accessToken).status
                    == 200)
            let me = try await client.get("/api/users/me", token: session.accessToken)
            #expect(me.data["privacyVersion"] as? Int == 5)
        }
    }
}
