import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// `POST /api/push/tokens`, `DELETE /api/push/tokens/{token}` and the OpenIM-style aliases, against a live server.
@Suite("Push tokens: bind, move, unbind", .serialized)
struct PushTokenRouteTests {
    static func bind(_ fixture: MessagingFixture, _ session: Session, _ body: [String: Any]) async throws
        -> TestResponse
    {
        try await fixture.client.post("/api/push/tokens", json: body, token: session.accessToken)
    }

    static func owner(_ fixture: MessagingFixture, _ token: String) async throws -> (
        userId: String, sessionId: String, vendor: String
    )? {
        try await fixture.database.query("SELECT user_id, session_id, vendor FROM push_tokens WHERE token = \(token)")
            .first.map {
                (try $0.decode("user_id"), try $0.decode("session_id"), try $0.decode("vendor"))
            }
    }

    @Test func bindsATokenToTheCallersSession() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(1)
            let token = PushFixture.token()
            let response = try await Self.bind(
                fixture, users[0],
                [
                    "token": token.uppercased(), "vendor": "apns",
                    "deviceId": "iPhone-1", "bundleId": "com.example.chat",
                    "environment": "sandbox",
                ])
            #expect(response.status == 201, "\(response.text)")
            #expect(response.string("token") == token, "APNs tokens are stored lower-cased")
            #expect(response.string("environment") == "sandbox")
            let owner = try #require(try await Self.owner(fixture, token))
            #expect(owner.userId == users[0].userId)
            #expect(owner.sessionId == users[0].sessionId)
            // Binding again is fine (201, one row).
            #expect(try await Self.bind(fixture, users[0], ["token": token, "vendor": "apns"]).status == 201)
            let count = try await fixture.database.query("SELECT count(*) AS n FROM push_tokens")[0].decode(
                "n", as: Int.self)
            #expect(count == 1)
        }
    }

    @Test func refusesInvalidFieldsWith1002() async throws {
        try await MessagingFixture.run { fixture in
            let user = try await fixture.users(1)[0]
            let good = PushFixture.token()
            let cases: [[String: Any]] = [
                ["token": good, "vendor": "carrier-pigeon"],
                ["token": "xyz" + good.dropFirst(3), "vendor": "apns"], // not hex
                ["token": String(good.prefix(62)), "vendor": "apns"], // too short
                ["token": good + "a", "vendor": "apns"], // odd length
                ["token": good, "vendor": "apns", "environment": "staging"],
                ["token": good, "vendor": "apns", "bundleId": "com example"],
                ["token": good, "vendor": "apns", "deviceId": String(repeating: "d", count: 129)],
                ["token": "short", "vendor": "fcm"],
                ["token": "has spaces in the token text", "vendor": "fcm"],
                ["vendor": "apns"],
                ["token": good, "vendor": 7],
            ]
            for body in cases {
                let response = try await Self.bind(fixture, user, body)
                #expect(response.status == 400 && response.code == 1002, "\(body): \(response.status) \(response.text)")
            }
            #expect(try await fixture.database.query("SELECT 1 FROM push_tokens").isEmpty)
            // No token: 401.
            let anonymous = try await fixture.client.post("/api/push/tokens", json: ["token": good, "vendor": "apns"])
            #expect(anonymous.status == 401)
            // FCM tokens are opaque.
            let fcm = "fcm-token:APA91b" + String(repeating: "x", count: 100)
            #expect(try await Self.bind(fixture, user, ["token": fcm, "vendor": "fcm"]).status == 201)
        }
    }

    /// Knowing a token is not owning it: a token another user's signed-in device holds moves only from that device
    /// (the same `deviceId`: one phone switching accounts) or once that user's session has ended.
    @Test func aTokenMovesOnlyFromItsDeviceOrAnEndedSession() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(3)
            let token = PushFixture.token()
            let first = try await Self.bind(fixture, users[0], ["token": token, "vendor": "apns", "deviceId": "phone"])
            #expect(first.status == 201)
            let stranger = try await Self.bind(fixture, users[1], ["token": token, "vendor": "apns"])
            #expect(stranger.status == 409)
            #expect(stranger.code == 1452)
            #expect(try await Self.owner(fixture, token)?.userId == users[0].userId)
            let sameDevice = try await Self.bind(
                fixture, users[1], ["token": token, "vendor": "apns", "deviceId": "phone"])
            #expect(sameDevice.status == 201)
            let owner = try #require(try await Self.owner(fixture, token))
            #expect(owner.userId == users[1].userId)
            #expect(owner.sessionId == users[1].sessionId)
            // A refused bind changed nothing: the caller's own previous token stays bound.
            let own = PushFixture.token()
            #expect(try await Self.bind(fixture, users[2], ["token": own, "vendor": "apns"]).status == 201)
            #expect(try await Self.bind(fixture, users[2], ["token": token, "vendor": "apns"]).code == 1452)
            #expect(try await Self.owner(fixture, own)?.userId == users[2].userId)
            // Once the holder's session has ended (before its tokens were unbound), the token is free.
            _ = try await fixture.database.query(
                "UPDATE sessions SET ended_at = now(), end_reason = 'logout' WHERE id = \(users[1].sessionId)")
            #expect(try await Self.bind(fixture, users[2], ["token": token, "vendor": "apns"]).status == 201)
            #expect(try await Self.owner(fixture, token)?.userId == users[2].userId)
            // A device's refreshed token replaces its previous one of the same vendor; other vendors stay.
            let tabletFirst = PushFixture.token()
            _ = try await Self.bind(fixture, users[2], ["token": tabletFirst, "vendor": "apns", "deviceId": "tablet"])
            let voip = PushFixture.token()
            _ = try await Self.bind(fixture, users[2], ["token": voip, "vendor": "apns_voip", "deviceId": "tablet"])
            let refreshed = PushFixture.token()
            _ = try await Self.bind(fixture, users[2], ["token": refreshed, "vendor": "apns", "deviceId": "tablet"])
            #expect(try await Self.owner(fixture, tabletFirst) == nil)
            #expect(try await Self.owner(fixture, refreshed)?.userId == users[2].userId)
            #expect(try await Self.owner(fixture, voip)?.vendor == "apns_voip")
            // A token bound with no device (neither the binding's nor the session's) is not another device's to drop.
            #expect(try await Self.owner(fixture, token)?.userId == users[2].userId)
        }
    }

    /// Without a `deviceId` the device is the session's (its login named one); a session whose login named none
    /// keeps every token: seed 001's SDK logs in without a device, so a user's phone and tablet share a session, and
    /// the tablet's token must not unbind the phone's.
    @Test func aTokenReplacesOnlyItsOwnDevicesPreviousOne() async throws {
        try await MessagingFixture.run { fixture in
            _ = try await fixture.users(1)
            let phone = try Session(
                try await fixture.client.login(appKey: fixture.appKey, username: "user0", deviceId: "phone-1"))
            let old = PushFixture.token()
            let new = PushFixture.token()
            #expect(try await Self.bind(fixture, phone, ["token": old, "vendor": "apns"]).status == 201)
            #expect(try await Self.bind(fixture, phone, ["token": new, "vendor": "apns"]).status == 201)
            #expect(try await Self.owner(fixture, old) == nil, "the session's device refreshed its token")
            #expect(try await Self.owner(fixture, new)?.userId == phone.userId)

            let shared = try Session(try await fixture.client.login(appKey: fixture.appKey, username: "user0"))
            let phoneToken = PushFixture.token()
            let tabletToken = PushFixture.token()
            #expect(try await Self.bind(fixture, shared, ["token": phoneToken, "vendor": "APNS"]).status == 201)
            #expect(try await Self.bind(fixture, shared, ["token": tabletToken, "vendor": "APNS"]).status == 201)
            #expect(try await Self.owner(fixture, phoneToken)?.sessionId == shared.sessionId)
            #expect(try await Self.owner(fixture, tabletToken)?.sessionId == shared.sessionId)
        }
    }

    /// Seed 001's SDK names its vendor in upper case ("vendor 固定为 APNS"): accepted, stored in lower case; other
    /// spellings are refused.
    @Test func vendorNamesInUpperCaseAreAccepted() async throws {
        try await MessagingFixture.run { fixture in
            let user = try await fixture.users(1)[0]
            let alert = PushFixture.token()
            #expect(try await Self.bind(fixture, user, ["token": alert, "vendor": "APNS"]).status == 201)
            #expect(try await Self.owner(fixture, alert)?.vendor == "apns")
            let voip = PushFixture.token()
            #expect(try await Self.bind(fixture, user, ["token": voip, "vendor": "APNS_VOIP"]).status == 201)
            #expect(try await Self.owner(fixture, voip)?.vendor == "apns_voip")
            let mixed = try await Self.bind(fixture, user, ["token": PushFixture.token(), "vendor": "Apns"])
            #expect(mixed.status == 400)
            #expect(mixed.code == 1002)
        }
    }

    /// With a configured bundle id, APNs tokens may name only it or its PushKit topic (`.voip`).
    @Test func apnsTokensNameOnlyTheAppsBundle() async throws {
        try await PushFixture.run { fixture in
            let user = try Session(try await fixture.client.register(appKey: fixture.messaging.appKey, username: "zoe"))
            func bind(_ bundleId: String, vendor: String = "apns") async throws -> TestResponse {
                try await Self.bind(
                    fixture.messaging, user, ["token": PushFixture.token(), "vendor": vendor, "bundleId": bundleId])
            }
            #expect(try await bind(PushFixture.bundleId).status == 201)
            #expect(try await bind(PushFixture.bundleId + ".voip", vendor: "apns_voip").status == 201)
            let other = try await bind("com.attacker.app")
            #expect(other.status == 400)
            #expect(other.code == 1002)
            #expect(try await bind("com.example.chat.widget", vendor: "apns_voip").code == 1002)
            // FCM/HMS tokens carry their own package names: not checked against the APNs bundle id.
            #expect(try await bind("com.example.android", vendor: "fcm").status == 201)
        }
    }

    @Test func unbindsOnlyTheCallersOwnToken() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(2)
            let token = PushFixture.token()
            _ = try await Self.bind(fixture, users[0], ["token": token, "vendor": "apns"])
            let stranger = try await fixture.client.delete("/api/push/tokens/\(token)", token: users[1].accessToken)
            #expect(stranger.status == 404 && stranger.code == 1450)
            #expect(try await Self.owner(fixture, token) != nil)
            let mine = try await fixture.client.delete(
                "/api/push/tokens/\(token.uppercased())", token: users[0].accessToken)
            #expect(mine.status == 200, "\(mine.text)")
            #expect(mine.data["removed"] as? Int == 1)
            #expect(try await Self.owner(fixture, token) == nil)
            let again = try await fixture.client.delete("/api/push/tokens/\(token)", token: users[0].accessToken)
            #expect(again.status == 404 && again.code == 1450)
        }
    }

    @Test func legacyAliasesBindAndUnbind() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(2)
            let token = PushFixture.token()
            let bound = try await fixture.client.post(
                "/user/device/push-token",
                json: ["uid": users[0].userId, "token": token, "type": "apns"],
                token: users[0].accessToken)
            #expect(bound.status == 201, "\(bound.text)")
            #expect(try await Self.owner(fixture, token)?.vendor == "apns")
            let voip = PushFixture.token()
            _ = try await fixture.client.post(
                "/user/device/push-token",
                json: ["uid": users[0].userId, "token": voip, "type": "voip"],
                token: users[0].accessToken)
            #expect(try await Self.owner(fixture, voip)?.vendor == "apns_voip")
            // Unbind one token, then (no token) everything the session bound.
            let one = try await fixture.client.post(
                "/user/device/push-token/unbind",
                json: ["uid": users[0].userId, "token": token],
                token: users[0].accessToken)
            #expect(one.status == 200 && one.data["removed"] as? Int == 1, "\(one.text)")
            let rest = try await fixture.client.post(
                "/user/device/push-token/unbind", json: ["uid": users[0].userId],
                token: users[0].accessToken)
            #expect(rest.status == 200 && rest.data["removed"] as? Int == 1, "\(rest.text)")
            let nothing = try await fixture.client.post(
                "/user/device/push-token/unbind", json: [:],
                token: users[0].accessToken)
            #expect(nothing.status == 200 && nothing.data["removed"] as? Int == 0)
            #expect(try await fixture.database.query("SELECT 1 FROM push_tokens").isEmpty)
        }
    }

    /// Seed 000 posts its business uid (`12345`) while its IM user is `tb_12345`: the token binds to the caller and
    /// the uid is recorded. A uid naming another existing user binds nothing to them.
    @Test func theLegacyUidIsRecordedAndNeverChoosesTheOwner() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(2)
            let (caller, other) = (users[0], users[1])
            let token = PushFixture.token()
            let business = try await fixture.client.post(
                "/user/device/push-token", json: ["uid": "12345", "token": token, "type": "apns"],
                token: caller.accessToken)
            #expect(business.status == 201, "\(business.text)")
            #expect(try await Self.owner(fixture, token)?.userId == caller.userId)
            #expect(try await Self.appUID(fixture, token) == "12345")

            // Naming another user of the app: still the caller's token, and the other user has none.
            let voip = PushFixture.token()
            let naming = try await fixture.client.post(
                "/user/device/push-token", json: ["uid": other.userId, "token": voip, "type": "voip"],
                token: caller.accessToken)
            #expect(naming.status == 201, "\(naming.text)")
            #expect(try await Self.owner(fixture, voip)?.userId == caller.userId)
            #expect(try await Self.owner(fixture, voip)?.sessionId == caller.sessionId)
            #expect(try await Self.appUID(fixture, voip) == other.userId)
            let othersTokens = try await fixture.database.query(
                "SELECT count(*) AS n FROM push_tokens WHERE user_id = \(other.userId)")[0].decode("n", as: Int.self)
            #expect(othersTokens == 0)

            // The app's uid is text a person reads: bounded, no control characters; nothing is bound then.
            for bad in ["", String(repeating: "9", count: 129), "12\u{0}45"] {
                let refused = try await fixture.client.post(
                    "/user/device/push-token", json: ["uid": bad, "token": PushFixture.token(), "type": "apns"],
                    token: caller.accessToken)
                #expect(refused.status == 400 && refused.code == 1002, "\(bad.debugDescription): \(refused.text)")
            }
            #expect(
                try await fixture.database.query("SELECT count(*) AS n FROM push_tokens")[0].decode("n", as: Int.self)
                    == 2)

            // The unbind alias accepts any uid and removes only the caller's tokens.
            let unbound = try await fixture.client.post(
                "/user/device/push-token/unbind", json: ["uid": "12345", "token": token], token: caller.accessToken)
            #expect(unbound.status == 200 && unbound.data["removed"] as? Int == 1, "\(unbound.text)")
            let notTheirs = try await fixture.client.post(
                "/user/device/push-token/unbind", json: ["uid": caller.userId, "token": voip],
                token: other.accessToken)
            #expect(notTheirs.status == 200 && notTheirs.data["removed"] as? Int == 0)
            #expect(try await Self.owner(fixture, voip)?.userId == caller.userId)
        }
    }

    static func appUID(_ fixture: MessagingFixture, _ token: String) async throws -> String? {
        try await fixture.database.query("SELECT app_uid FROM push_tokens WHERE token = \(token)").first?.decode(
            "app_uid")
    }

    @Test func logoutAndADisplacedSessionUnbindTheirTokens() async throws {
        try await MessagingFixture.run { fixture in
            let users = try await fixture.users(2)
            let token = PushFixture.token()
            _ = try await Self.bind(fixture, users[0], ["token": token, "vendor": "apns"])
            let logout = try await fixture.client.post("/api/auth/logout", token: users[0].accessToken)
            #expect(logout.status == 200, "\(logout.text)")
            #expect(
                try await eventually { try await Self.owner(fixture, token) == nil } != nil,
                "the token of a logged-out session is unbound")

            // One session per platform: a second iOS login displaces the first, whose token goes.
            let other = PushFixture.token()
            _ = try await Self.bind(fixture, users[1], ["token": other, "vendor": "apns"])
            let relogin = try Session(
                try await fixture.client.login(
                    appKey: fixture.appKey, username: "user1",
                    platform: "ios", deviceId: "another-phone"))
            #expect(relogin.sessionId != users[1].sessionId)
            #expect(
                try await eventually { try await Self.owner(fixture, other) == nil } != nil,
                "the token of a displaced session is unbound")
        }
    }
}
