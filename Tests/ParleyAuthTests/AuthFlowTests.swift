import Foundation
import ParleyLiveSupport
import Testing

@testable import ParleyAuth

/// Register, login, refresh (rotation and reuse detection), logout, sessions, against a live server and a real
/// PostgreSQL.
@Suite("Auth flows")
struct AuthFlowTests {
    @Test func registerAnswersTheDocumentedShape() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let response = try await live.client().register(appKey: app.appKey, username: "Alice")
            #expect(response.status == 200)
            #expect(response.code == 0)
            #expect(
                Set(response.data.keys) == [
                    "user", "sessionId", "accessToken", "accessTokenExpiresAt", "refreshToken",
                    "refreshTokenExpiresAt", "imToken", "imTokenExpiresAt",
                ])
            let user = try #require(response.data["user"] as? [String: Any])
            #expect(user["username"] as? String == "alice") // case-insensitive usernames, stored lower-cased
            #expect((user["id"] as? String)?.hasPrefix("u_") == true)
            #expect(response.string("refreshToken")?.hasPrefix("rt_") == true)
            // ISO 8601 UTC with milliseconds.
            let expiry = try #require(response.string("accessTokenExpiresAt"))
            #expect(expiry.hasSuffix("Z") && expiry.count == 24)
        }
    }

    @Test func loginRefreshLogout() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            _ = try Session(try await client.register(appKey: app.appKey, username: "bob", platform: "web"))
            let login = try Session(try await client.login(appKey: app.appKey, username: "BOB", platform: "ios"))

            let me = try await client.get("/api/users/me", token: login.accessToken)
            #expect(me.status == 200)
            #expect(me.string("id") == login.userId)

            // Refresh rotates: a new pair, same session.
            let refreshed = try Session(try await client.refresh(login.refreshToken))
            #expect(refreshed.sessionId == login.sessionId)
            #expect(refreshed.refreshToken != login.refreshToken)
            #expect(try await client.get("/api/users/me", token: refreshed.accessToken).status == 200)

            // Logout ends the session: its access token and its refresh token stop working.
            let logout = try await client.post("/api/auth/logout", token: refreshed.accessToken)
            #expect(logout.status == 200)
            let after = try await client.get("/api/users/me", token: refreshed.accessToken)
            #expect(after.status == 401)
            #expect(after.code == 1034)
            #expect(try await client.refresh(refreshed.refreshToken).code == 1034)
        }
    }

    @Test func reusedRefreshTokenEndsTheSession() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let first = try Session(try await client.register(appKey: app.appKey, username: "carol"))
            let second = try Session(try await client.refresh(first.refreshToken))
            // The first token again: theft is assumed, the whole session ends.
            let reuse = try await client.refresh(first.refreshToken)
            #expect(reuse.status == 401)
            #expect(reuse.code == 1037)
            // Even the legitimate newest tokens are dead now.
            #expect(try await client.get("/api/users/me", token: second.accessToken).code == 1034)
            #expect(try await client.refresh(second.refreshToken).code == 1034)
            let reason = try await live.app.database.query(
                "SELECT end_reason FROM sessions WHERE id = \(first.sessionId)")[0].decode(0, as: String.self)
            #expect(reason == "token_reuse")
        }
    }

    /// Two refreshes racing with one token: the row lock lets exactly one rotate; the other is a reuse.
    @Test func concurrentRefreshWithOneTokenRotatesOnce() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let session = try Session(try await client.register(appKey: app.appKey, username: "cyrus"))
            async let first = client.refresh(session.refreshToken)
            async let second = client.refresh(session.refreshToken)
            let codes = [try await first.code, try await second.code].compactMap { $0 }.sorted()
            #expect(codes == [0, 1037])
            // The reuse ended the session, so the winner's tokens are dead as well.
            #expect(try await client.get("/api/users/me", token: session.accessToken).code == 1034)
        }
    }

    @Test func unknownOrMalformedRefreshTokensAreRefused() async throws {
        try await withLiveApp { live in
            let client = live.client()
            #expect(try await client.refresh("rt_" + String(repeating: "A", count: 43)).code == 1037)
            #expect(try await client.refresh("nonsense").code == 1037)
            let missing = try await client.post("/api/auth/refresh", json: [:])
            #expect(missing.code == 1002)
        }
    }

    @Test func takenUsernameAnswers1040() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            #expect(try await client.register(appKey: app.appKey, username: "dave").status == 200)
            let again = try await client.register(appKey: app.appKey, username: "DAVE")
            #expect(again.status == 409)
            #expect(again.code == 1040)
        }
    }

    @Test func registrationValidatesInput() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            #expect(try await client.register(appKey: app.appKey, username: "x").code == 1002)
            #expect(try await client.register(appKey: app.appKey, username: "evan", password: "short").code == 1002)
            #expect(try await client.register(appKey: app.appKey, username: "with space").code == 1002)
            let noKey = try await client.post(
                "/api/auth/register", json: ["username": "evan", "password": "long enough"])
            #expect(noKey.code == 1039)
            let badKey = try await client.register(appKey: "ak_doesnotexist", username: "evan")
            #expect(badKey.status == 401)
            #expect(badKey.code == 1039)
        }
    }

    @Test func wrongPasswordAndUnknownUserLookTheSame() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            _ = try Session(try await client.register(appKey: app.appKey, username: "frank"))
            let wrong = try await client.login(appKey: app.appKey, username: "frank", password: "wrong password")
            let unknown = try await client.login(appKey: app.appKey, username: "nobody", password: "wrong password")
            #expect(wrong.status == 401 && unknown.status == 401)
            #expect(wrong.code == 1035 && unknown.code == 1035)
            #expect(wrong.text == unknown.text)
        }
    }

    @Test func sessionsAreListedAndCanBeEndedFromAnotherDevice() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let phone = try Session(try await client.register(appKey: app.appKey, username: "gina", platform: "ios"))
            let laptop = try Session(
                try await client.login(
                    appKey: app.appKey, username: "gina", platform: "desktop",
                    deviceModel: "MacBook"))
            let list = try await client.get("/api/auth/sessions", token: laptop.accessToken)
            let sessions = try #require(list.data["sessions"] as? [[String: Any]])
            #expect(sessions.count == 2)
            let current = sessions.first { $0["current"] as? Bool == true }
            #expect(current?["id"] as? String == laptop.sessionId)
            #expect(current?["deviceModel"] as? String == "MacBook")
            #expect(current?["lastSeenAt"] is String)

            let end = try await client.delete("/api/auth/sessions/\(phone.sessionId)", token: laptop.accessToken)
            #expect(end.status == 200)
            #expect(try await client.get("/api/users/me", token: phone.accessToken).code == 1034)
            #expect(try await client.get("/api/users/me", token: laptop.accessToken).status == 200)
            // Ending it again: nothing to end.
            #expect(
                try await client.delete("/api/auth/sessions/\(phone.sessionId)", token: laptop.accessToken).status
                    == 404)
        }
    }

    @Test func logoutAllEndsEverySession() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let a = try Session(try await client.register(appKey: app.appKey, username: "hank", platform: "ios"))
            let b = try Session(try await client.login(appKey: app.appKey, username: "hank", platform: "android"))
            let all = try await client.post("/api/auth/logout-all", token: b.accessToken)
            #expect(all.status == 200)
            #expect(all.data["endedSessions"] as? Int == 2)
            #expect(try await client.get("/api/users/me", token: a.accessToken).code == 1034)
            #expect(try await client.get("/api/users/me", token: b.accessToken).code == 1034)
        }
    }

    @Test func profileCanBeReadAndChanged() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let me = try Session(try await client.register(appKey: app.appKey, username: "ivy"))
            let other = try Session(try await client.register(appKey: app.appKey, username: "jack"))
            let patched = try await client.patch("/api/users/me", json: ["nickname": "Ivy"], token: me.accessToken)
            #expect(patched.status == 200)
            #expect(patched.string("nickname") == "Ivy")
            // An avatar is a file the user may read (ParleyFilesTests cover the rest): a key that names none is
            // unknown, and the whole change is refused.
            let unknown = try await client.patch(
                "/api/users/me", json: ["nickname": "Ivo", "avatar": "avatars/ivy.png"], token: me.accessToken)
            #expect(unknown.status == 404)
            #expect(unknown.code == 1302)
            #expect(try await client.get("/api/users/me", token: me.accessToken).string("nickname") == "Ivy")
            let cleared = try await client.patch("/api/users/me", json: ["avatar": NSNull()], token: me.accessToken)
            #expect(cleared.data["avatar"] is NSNull)
            #expect(cleared.string("nickname") == "Ivy")
            // openapi.yaml's Nickname and ObjectKey: at most 64 code points as sent (spaces count, then are
            // trimmed), no control characters anywhere, avatars printable ASCII.
            let padded = try await client.patch("/api/users/me", json: ["nickname": "  Ivy  "], token: me.accessToken)
            #expect(padded.string("nickname") == "Ivy")
            let sixtyFour = String(repeating: "é", count: 64)
            #expect(
                try await client.patch("/api/users/me", json: ["nickname": sixtyFour], token: me.accessToken).status
                    == 200)
            for refused in [
                " " + sixtyFour, "\r\nIvy", "I\u{85}vy", "   ",
                "\u{1F44B}\u{1F3FB}" + String(repeating: "a", count: 63),
            ] {
                let answer = try await client.patch("/api/users/me", json: ["nickname": refused], token: me.accessToken)
                #expect(answer.code == 1002, "\(refused)")
            }
            for refused in ["avatars/ívy.png", "avatars/\u{7F}"] {
                let answer = try await client.patch("/api/users/me", json: ["avatar": refused], token: me.accessToken)
                #expect(answer.code == 1002, "\(refused)")
            }

            let seen = try await client.get("/api/users/\(me.userId)", token: other.accessToken)
            #expect(seen.status == 200)
            // The public profile only (not username, searchable, privacy version, creation time).
            #expect(Set(seen.data.keys) == ["id", "nickname", "avatar", "signature", "ex", "deleted"])
            let lookup = try await client.post(
                "/api/users/lookup", json: ["ids": [me.userId, "u_missing", other.userId]],
                token: other.accessToken)
            let users = try #require(lookup.data["users"] as? [[String: Any]])
            #expect(users.compactMap { $0["id"] as? String } == [me.userId, other.userId])
            let tooMany = try await client.post(
                "/api/users/lookup", json: ["ids": (0...100).map { "u\($0)" }],
                token: other.accessToken)
            #expect(tooMany.code == 1002)
            #expect(try await client.get("/api/users/u_missing", token: other.accessToken).status == 404)
        }
    }

    @Test func imTokenRenewal() async throws {
        try await withLiveApp { live in
            let (app, _) = try await live.createApp()
            let client = live.client()
            let me = try Session(try await client.register(appKey: app.appKey, username: "kate"))
            let renewed = try await client.post("/api/im/auth/token", token: me.accessToken)
            #expect(renewed.status == 200)
            let token = try #require(renewed.string("token"))
            #expect(renewed.string("expiresAt") != nil)
            let principal = try live.auth.authenticator.verifyIMToken(token)
            #expect(principal.sessionId == me.sessionId)
            // The IM token itself cannot renew (it is not an access token).
            #expect(try await client.post("/api/im/auth/token", token: me.imToken).code == 1032)
        }
    }
}
