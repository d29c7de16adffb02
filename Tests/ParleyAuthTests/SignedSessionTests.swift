import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

@testable import ParleyAuth

/// Backend-signed logins (seeds 000 and 001): one token for REST and the WebSocket, and a renewal that keeps the
/// session.
@Suite("Signed sessions")
struct SignedSessionTests {
    static let signedFields: Set<String> = [
        "token", "expiresAt", "renewed", "user", "sessionId", "accessToken", "accessTokenExpiresAt", "refreshToken",
        "refreshTokenExpiresAt", "imToken", "imTokenExpiresAt",
    ]

    @Test func theTokenOpensRESTAndTheWebSocketWhilePasswordTokensStayApart() async throws {
        try await withLiveApp { live in
            let (app, secret) = try await live.createApp()
            let client = live.client()
            let answer = try await live.signedLogin(
                appKey: app.appKey, secret: secret, ["appKey": app.appKey, "userId": "tb_12345", "platform": "ios"])
            #expect(answer.status == 200)
            #expect(Set(answer.data.keys) == Self.signedFields)
            #expect(answer.data["renewed"] as? Bool == false)
            #expect((answer.data["user"] as? [String: Any])?["id"] as? String == "tb_12345")
            let token = try #require(answer.string("token"))
            let session = try Session(answer)

            // `token` is accepted by client REST routes and by the WebSocket's check.
            #expect(try await client.get("/api/users/me", token: token).status == 200)
            #expect(try await client.get("/api/im/conversations", token: token).status == 200)
            #expect(try await client.get("/api/auth/sessions", token: token).status == 200)
            #expect(try live.auth.authenticator.verifyIMToken(token).sessionId == session.sessionId)
            // The session's own tokens keep their audiences, like a password login's.
            #expect(try await client.get("/api/users/me", token: session.imToken).code == 1032)
            #expect(throws: (any Error).self) { try live.auth.authenticator.verifyIMToken(session.accessToken) }
            let password = try Session(try await client.register(appKey: app.appKey, username: "alice"))
            #expect(try await client.get("/api/users/me", token: password.imToken).code == 1032)
            #expect(throws: (any Error).self) { try live.auth.authenticator.verifyIMToken(password.accessToken) }
            // Logout with `token` ends the session: every token of it is refused.
            #expect(try await client.post("/api/auth/logout", token: token).status == 200)
            #expect(try await client.get("/api/users/me", token: session.accessToken).code == 1034)
            #expect(try await client.get("/api/users/me", token: token).code == 1034)
        }
    }

    @Test func aSignedLoginForTheSameDeviceRenewsTheSession() async throws {
        try await withLiveApp { live in
            let (app, secret) = try await live.createApp()
            let client = live.client()
            let recorder = AccountConflictTests.EventRecorder(live.auth.events)
            let login: [String: Any] = [
                "appKey": app.appKey, "userId": "tb_7", "platform": "ios", "deviceId": "phone-1",
            ]
            let firstAnswer = try await live.signedLogin(appKey: app.appKey, secret: secret, login)
            let first = try Session(firstAnswer)
            // A push token bound with the first answer's client token stays bound through the renewal.
            let pushToken = String(repeating: "ab", count: 32)
            let bound = try await client.post(
                "/api/push/tokens", json: ["token": pushToken, "vendor": "apns"],
                token: try #require(firstAnswer.string("token")))
            #expect(bound.status == 201)
            let again = try await live.signedLogin(appKey: app.appKey, secret: secret, login)
            let second = try Session(again)
            #expect(again.data["renewed"] as? Bool == true)
            #expect(second.sessionId == first.sessionId)
            // New tokens, even within the same second (each carries its own jti).
            #expect(second.refreshToken != first.refreshToken && second.accessToken != first.accessToken)
            #expect(again.string("token") != firstAnswer.string("token"))
            // The session lives on: the first answer's tokens still work until they expire.
            #expect(try await client.get("/api/users/me", token: first.accessToken).status == 200)
            #expect(try await client.get("/api/users/me", token: second.accessToken).status == 200)
            let open = try await live.app.database.query(
                "SELECT count(*) FROM sessions WHERE app_id = \(app.id) AND user_id = 'tb_7' AND ended_at IS NULL")
            #expect(try open[0].decode(0, as: Int.self) == 1)
            let kept = try await live.app.database.query(
                "SELECT session_id FROM push_tokens WHERE app_id = \(app.id) AND token = \(pushToken)")
            #expect(try kept.first?.decode(0, as: String.self) == first.sessionId)

            // The superseded refresh token is unknown (1037) without ending the session; the new one rotates.
            #expect(try await client.refresh(first.refreshToken).code == 1037)
            let refreshed = try Session(try await client.refresh(second.refreshToken))
            #expect(refreshed.sessionId == first.sessionId)
            #expect(try await client.get("/api/users/me", token: refreshed.accessToken).status == 200)

            // No deviceId on either side also renews; another device id on the platform displaces (policy).
            let bare: [String: Any] = ["appKey": app.appKey, "userId": "tb_8", "platform": "android"]
            let bareFirst = try Session(try await live.signedLogin(appKey: app.appKey, secret: secret, bare))
            let bareAgain = try await live.signedLogin(appKey: app.appKey, secret: secret, bare)
            #expect(bareAgain.data["renewed"] as? Bool == true)
            #expect(try Session(bareAgain).sessionId == bareFirst.sessionId)
            var otherDevice = login
            otherDevice["deviceId"] = "phone-2"
            let other = try await live.signedLogin(appKey: app.appKey, secret: secret, otherDevice)
            #expect(other.data["renewed"] as? Bool == false)
            #expect(try Session(other).sessionId != first.sessionId)
            // Only that displacement was announced: the renewals ended nothing.
            let heard = try await eventually { recorder.all.contains { $0.sessionId == first.sessionId } }
            #expect(heard != nil)
            #expect(recorder.all.map(\.sessionId) == [first.sessionId])
            #expect(recorder.all.first?.reason == .accountConflict)
        }
    }

    /// The app's backend speaks for its own users, not for accounts that log in with a password: such an id is
    /// refused (1042) and the account's session is untouched.
    @Test func aSignedLoginCannotTakeOverAPasswordAccount() async throws {
        try await withLiveApp { live in
            let (app, secret) = try await live.createApp()
            let client = live.client()
            let password = try Session(
                try await client.register(appKey: app.appKey, username: "bob", platform: "ios"))
            let signed = try await live.signedLogin(
                appKey: app.appKey, secret: secret,
                ["appKey": app.appKey, "userId": password.userId, "platform": "ios"])
            #expect(signed.status == 409)
            #expect(signed.code == 1042)
            #expect(try await client.get("/api/users/me", token: password.accessToken).status == 200)
            let sessions = try await live.app.database.query(
                "SELECT count(*) FROM sessions WHERE app_id = \(app.id) AND user_id = \(password.userId)")
            #expect(try sessions[0].decode(0, as: Int.self) == 1)
        }
    }

    @Test func theConflictNoticeSpeaksTheDisplacedDevicesLanguage() async throws {
        try await withLiveApp { live in
            let (app, secret) = try await live.createApp()
            let recorder = AccountConflictTests.EventRecorder(live.auth.events)
            // The backend names the device's language; without it the request's Accept-Language counts.
            let chinese = try Session(
                try await live.signedLogin(
                    appKey: app.appKey, secret: secret,
                    ["appKey": app.appKey, "userId": "tb_zh", "platform": "ios", "deviceId": "a", "language": "zh-CN"]))
            let english = try Session(
                try await live.signedLogin(
                    appKey: app.appKey, secret: secret,
                    ["appKey": app.appKey, "userId": "tb_en", "platform": "ios", "deviceId": "a"],
                    headers: ["Accept-Language": "fr;q=1, en-GB;q=0.8, zh;q=0.5"]))
            for userId in ["tb_zh", "tb_en"] {
                _ = try await live.signedLogin(
                    appKey: app.appKey, secret: secret,
                    [
                        "appKey": app.appKey, "userId": userId, "platform": "ios", "deviceId": "b",
                        "deviceModel": "iPhone 16",
                    ])
            }
            let heard = try await eventually { recorder.all.count == 2 }
            #expect(heard != nil)
            let zh = try #require(recorder.all.first { $0.sessionId == chinese.sessionId }?.conflictNotice)
            #expect(zh.deviceModel == "iPhone 16")
            #expect(zh.text == "您的账号在另一台设备（iPhone 16）登录，如非本人请修改密码。")
            let en = try #require(recorder.all.first { $0.sessionId == english.sessionId }?.conflictNotice)
            #expect(en.text.hasPrefix("Your account was logged in on another device (iPhone 16)."))
        }
    }

    @Test func badSignedLoginsStoreNothing() async throws {
        try await withLiveApp { live in
            let (app, secret) = try await live.createApp()
            let cases: [([String: Any], String)] = [
                (["appKey": app.appKey, "userId": "bad id!"], "userId"),
                (["appKey": app.appKey, "userId": String(repeating: "x", count: 65)], "userId"),
                (["appKey": app.appKey, "userId": "tb_1", "language": "fr"], "language"),
                (["appKey": app.appKey, "userId": "tb_1", "language": 5], "language"),
                (["appKey": app.appKey, "userId": "tb_1", "platform": "iOS phone"], "platform"),
            ]
            for (body, field) in cases {
                let answer = try await live.signedLogin(appKey: app.appKey, secret: secret, body)
                #expect(answer.status == 400, "\(body)")
                #expect(answer.code == 1002 || answer.code == 1001, "\(body)")
                #expect(answer.message?.contains(field) == true, "\(body): \(answer.message ?? "")")
            }
            let stored = try await live.app.database.query(
                """
                SELECT (SELECT count(*) FROM users WHERE app_id = \(app.id))
                     + (SELECT count(*) FROM sessions WHERE app_id = \(app.id))
                """)
            #expect(try stored[0].decode(0, as: Int.self) == 0)
        }
    }

    @Test(
        arguments: [
            (nil, SessionLanguage.en), ("zh-CN,zh;q=0.9,en;q=0.8", .zh), ("en-US,en;q=0.9,zh-CN;q=0.8", .en),
            ("fr-FR, zh-Hant;q=0.7", .zh), ("de, fr", .en), ("*", .en), ("zh;q=0, en;q=0.1", .en),
            ("en;q=0.5, zh;q=0.5", .en), ("ZH-tw", .zh), ("zh;q=abc", .en), ("", .en), (";;,,", .en),
        ] as [(String?, SessionLanguage)])
    func acceptLanguagePicksTheMostPreferredSupportedLanguage(header: String?, expected: SessionLanguage) {
        #expect(SessionLanguage(acceptLanguage: header) == expected)
    }
}
