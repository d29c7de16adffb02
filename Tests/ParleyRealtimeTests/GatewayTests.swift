import Foundation
import ParleyAuth
import ParleyLiveSupport
import ParleyTestSupport
import ParleyWebSocket
import Testing

/// The WebSocket gateway end to end: real clients against a whole server on a real database.
@Suite("Realtime gateway", .serialized)
struct GatewayTests {
    /// A device: the user's session (REST tokens) and its WebSocket.
    struct Device {
        let session: Session
        let socket: IMTestClient
    }

    static func device(_ fx: MessagingFixture, username: String, platform: String = "ios", register: Bool = true)
        async throws -> Device
    {
        let response =
            register
            ? try await fx.client.register(appKey: fx.appKey, username: username, platform: platform)
            : try await fx.client.login(appKey: fx.appKey, username: username, platform: platform)
        let session = try Session(response)
        return Device(
            session: session, socket: try await IMTestClient.connect(port: fx.live.port, token: session.imToken))
    }

    static func upgrade(_ fx: MessagingFixture, headers: [String: String], target: String = "/ws") async throws
        -> TestResponse
    {
        var all = [
            "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version": "13",
        ]
        all.merge(headers) { _, new in new }
        return try await fx.client.send("GET", target, headers: all)
    }

    @Test func upgradeNeedsAValidIMToken() async throws {
        try await MessagingFixture.run { fx in
            let session = try Session(try await fx.client.register(appKey: fx.appKey, username: "alice"))
            let missing = try await Self.upgrade(fx, headers: [:])
            #expect(missing.status == 401)
            #expect(missing.code == 1030)
            let access = try await Self.upgrade(fx, headers: ["Authorization": "Bearer \(session.accessToken)"])
            #expect(access.status == 401)
            #expect(access.code == 1032)
            let garbage = try await Self.upgrade(fx, headers: [:], target: "/ws?token=not-a-token")
            #expect(garbage.status == 401)
            // The IM token in the query works for clients that cannot set headers; hello names the session.
            let device = try await IMTestClient.connect(port: fx.live.port, token: session.imToken, tokenInQuery: true)
            let hello = device.hello["data"] as? [String: Any] ?? [:]
            #expect(hello["userId"] as? String == session.userId)
            #expect(hello["sessionId"] as? String == session.sessionId)
            #expect(hello["heartbeatSeconds"] as? Int == 30)
            #expect(hello["serverTime"] is String)
            let pong = try await device.request("ping")
            #expect(pong["serverTime"] is String)
            device.close()
        }
    }

    @Test func malformedFramesGetErrorsAndTheConnectionStays() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await Self.device(fx, username: "alice")
            try await alice.socket.sendText("not json")
            let notJSON = try await alice.socket.next("error")
            #expect((notJSON["data"] as? [String: Any])?["code"] as? Int == 1001)
            try await alice.socket.sendText(#"{"reqId":"x1"}"#)
            let noType = try await alice.socket.next("error")
            #expect(noType["reqId"] as? String == "x1")
            #expect((noType["data"] as? [String: Any])?["code"] as? Int == 1202)
            await #expect(throws: IMTestError.self) { try await alice.socket.request("fly") }
            do {
                try await alice.socket.request(
                    "send",
                    [
                        "toId": "nobody", "chatType": "single", "msgType": "text",
                        "content": "hi", "clientMsgId": "c1",
                    ])
                Issue.record("sending to an unknown user succeeded")
            } catch let error as IMTestError {
                #expect(error.code == 1103)
            }
            do {
                try await alice.socket.request(
                    "send",
                    [
                        "toId": "bob", "chatType": "single", "msgType": "sticker",
                        "content": "hi", "clientMsgId": "c2",
                    ])
                Issue.record("an unknown msgType was accepted")
            } catch let error as IMTestError {
                #expect(error.code == 1002)
            }
            // Still usable.
            #expect(try await alice.socket.request("ping")["serverTime"] is String)
        }
    }

    /// Two connections of one session (seed 001 opens an `ImClient` per screen, and devices whose logins named no
    /// device share a session): what a frame changes reaches the other connection, and only the sending one has the
    /// ack; what a REST request changes reaches neither (the session has the answer).
    @Test func aFramesChangeReachesTheSessionsOtherConnections() async throws {
        try await MessagingFixture.run { fx in
            let first = try await Self.device(fx, username: "alice")
            let second = try await IMTestClient.connect(port: fx.live.port, token: first.session.imToken)
            let bob = try await Self.device(fx, username: "bob")
            let sent = try await first.socket.request(
                "send",
                [
                    "toId": bob.session.userId, "chatType": "single", "msgType": "text", "content": "from the first",
                    "clientMsgId": "s1",
                ])
            let id = try #require(sent["id"] as? String)
            let atSecond = try await second.next("message")
            #expect((atSecond["data"] as? [String: Any])?["id"] as? String == id)
            _ = try await first.socket.request("revoke", ["msgId": id])
            let revoked = try await second.next("revoke")
            #expect((revoked["data"] as? [String: Any])?["msgId"] as? String == id)
            #expect(try await first.socket.collect("message", for: .milliseconds(200)).isEmpty, "no echo")
            #expect(try await first.socket.collect("revoke", for: .milliseconds(100)).isEmpty, "no echo")

            try await fx.sendOK(first.session, to: bob.session.userId, content: "via REST")
            _ = try await bob.socket.next("message") {
                ($0["data"] as? [String: Any])?["content"] as? String == "via REST"
            }
            #expect(try await second.collect("message", for: .milliseconds(300)).isEmpty, "the session has the answer")
            #expect(try await first.socket.collect("message", for: .milliseconds(100)).isEmpty)
            second.close()
        }
    }

    @Test func oneToOneReachesEveryDeviceButTheSender() async throws {
        try await MessagingFixture.run { fx in
            let alicePhone = try await Self.device(fx, username: "alice", platform: "ios")
            let aliceWeb = try await Self.device(fx, username: "alice", platform: "web", register: false)
            let bob = try await Self.device(fx, username: "bob")
            let sent = try await alicePhone.socket.request(
                "send",
                [
                    "toId": bob.session.userId, "chatType": "single", "msgType": "text", "content": "hi bob",
                    "clientMsgId": "m1",
                ])
            #expect(sent["seq"] as? Int == 1)
            let id = try #require(sent["id"] as? String)
            let atBob = try await bob.socket.next("message")
            #expect((atBob["data"] as? [String: Any])?["id"] as? String == id)
            #expect((atBob["data"] as? [String: Any])?["content"] as? String == "hi bob")
            let atWeb = try await aliceWeb.socket.next("message")
            #expect((atWeb["data"] as? [String: Any])?["id"] as? String == id)
            // The sending device has its ack and no echo.
            #expect(try await alicePhone.socket.collect("message", for: .milliseconds(300)).isEmpty)

            // REST sends reach the WebSocket too.
            try await fx.sendOK(bob.session, to: alicePhone.session.userId, content: "via REST")
            let reply = try await alicePhone.socket.next("message")
            #expect((reply["data"] as? [String: Any])?["content"] as? String == "via REST")
            _ = try await aliceWeb.socket.next("message")

            // A repeated clientMsgId is answered with the original and announced to nobody.
            let again = try await alicePhone.socket.request(
                "send",
                [
                    "toId": bob.session.userId, "chatType": "single", "msgType": "text", "content": "hi bob",
                    "clientMsgId": "m1",
                ])
            #expect(again["id"] as? String == id)
            #expect(try await bob.socket.collect("message", for: .milliseconds(300)).isEmpty)
        }
    }

    @Test func groupMessagesReachEveryMember() async throws {
        try await MessagingFixture.run { fx in
            var devices: [Device] = []
            for index in 0..<5 { devices.append(try await Self.device(fx, username: "member\(index)")) }
            let outsider = try await Self.device(fx, username: "outsider")
            let group = try await fx.createGroup(devices[0].session, members: devices[1...].map(\.session))
            // Everyone (but the creator's own device, which made the REST call... it has no origin session on WS)
            // sees the group_created notice.
            for device in devices { _ = try await device.socket.next("message") }
            let sent = try await devices[2].socket.request(
                "send",
                [
                    "toId": group.groupId, "chatType": "group", "msgType": "text", "content": "hello all",
                    "clientMsgId": "g1",
                ])
            for (index, device) in devices.enumerated() where index != 2 {
                let frame = try await device.socket.next("message")
                #expect((frame["data"] as? [String: Any])?["id"] as? String == sent["id"] as? String)
            }
            #expect(try await outsider.socket.collect("message", for: .milliseconds(300)).isEmpty)
            // Typing goes to the other members.
            try await devices[1].socket.request("typing", ["conversationId": group.conversationId])
            let typing = try await devices[3].socket.next("typing")
            #expect((typing["data"] as? [String: Any])?["userId"] as? String == devices[1].session.userId)
            do {
                try await outsider.socket.request("typing", ["conversationId": group.conversationId])
                Issue.record("an outsider could type into the group")
            } catch let error as IMTestError {
                #expect(error.code == 1101) // as for a conversation that does not exist
            }
            // A removed member gets the notice, then nothing more.
            #expect(
                try await fx.client.delete(
                    "/api/im/groups/\(group.groupId)/members/\(devices[4].session.userId)",
                    token: devices[0].session.accessToken
                ).status == 200)
            let removal = try await devices[4].socket.next("message") { frame in
                MessagingFixture.contentObject(frame["data"])?["event"] as? String == "member_removed"
            }
            #expect(removal["type"] as? String == "message")
            _ = try await devices[4].socket.next("conversation")
            try await fx.sendOK(devices[1].session, to: group.groupId, chatType: "group", content: "after removal")
            _ = try await devices[3].socket.next("message") { frame in
                (frame["data"] as? [String: Any])?["content"] as? String == "after removal"
            }
            #expect(
                try await devices[4].socket.collect("message", for: .milliseconds(300)).filter {
                    ($0["data"] as? [String: Any])?["content"] as? String == "after removal"
                }.isEmpty)
        }
    }

    @Test func revokeEditAndReadEvents() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await Self.device(fx, username: "alice")
            let bob = try await Self.device(fx, username: "bob")
            let sent = try await alice.socket.request(
                "send",
                [
                    "toId": bob.session.userId, "chatType": "single",
                    "msgType": "text", "content": "tpyo", "clientMsgId": "e1",
                ])
            let id = try #require(sent["id"] as? String)
            let conversationId = try #require(sent["conversationId"] as? String)
            _ = try await bob.socket.next("message")

            let edited = try await alice.socket.request("edit", ["msgId": id, "content": "typo"])
            #expect(edited["content"] as? String == "typo")
            let edit = try await bob.socket.next("edit")
            #expect((edit["data"] as? [String: Any])?["content"] as? String == "typo")
            #expect((edit["data"] as? [String: Any])?["editedAt"] is Int)

            try await bob.socket.request("read", ["conversationId": conversationId, "seq": 1])
            let read = try await alice.socket.next("read")
            #expect((read["data"] as? [String: Any])?["userId"] as? String == bob.session.userId)
            #expect((read["data"] as? [String: Any])?["seq"] as? Int == 1)

            let revoked = try await alice.socket.request("revoke", ["msgId": id])
            #expect(revoked["revoked"] as? Bool == true)
            let revoke = try await bob.socket.next("revoke")
            let data = revoke["data"] as? [String: Any] ?? [:]
            #expect(data["msgId"] as? String == id)
            #expect(data["conversationId"] as? String == conversationId)
            #expect(data["operatorId"] as? String == alice.session.userId)
            // Twice: success, no second event.
            try await alice.socket.request("revoke", ["msgId": id])
            #expect(try await bob.socket.collect("revoke", for: .milliseconds(300)).isEmpty)

            // Conversation changes go to the user's other devices.
            let bobTablet = try await Self.device(fx, username: "bob", platform: "android", register: false)
            #expect(
                try await fx.client.patch(
                    "/api/im/conversations/\(conversationId)", json: ["isPinned": true],
                    token: bob.session.accessToken
                ).status == 200)
            let change = try await bobTablet.socket.next("conversation")
            #expect((change["data"] as? [String: Any])?["isPinned"] as? Bool == true)
        }
    }

    @Test func secondLoginOnTheSamePlatformGetsAccountConflict() async throws {
        try await MessagingFixture.run { fx in
            let first = try await Self.device(fx, username: "carol", platform: "ios")
            _ = try await fx.client.login(
                appKey: fx.appKey, username: "carol", platform: "ios", deviceModel: "iPhone 16")
            let notice = try await first.socket.next("account_conflict")
            #expect(((notice["data"] as? [String: Any])?["text"] as? String)?.contains("another device") == true)
            #expect(try await first.socket.waitForClose()?.rawValue == 4500)
        }
    }

    /// Seed 000's silent renewal (a new signed login for the same device) keeps its socket; a login on another
    /// device displaces it with the notice in the displaced device's language, under both names seed 000 reads.
    @Test func aSignedRenewalKeepsTheSocketAndTheConflictNoticeSpeaksItsLanguage() async throws {
        try await MessagingFixture.run { fx in
            let peer = try Session(try await fx.client.register(appKey: fx.appKey, username: "peer"))
            let login: [String: Any] = [
                "appKey": fx.appKey, "userId": "tb_12345", "platform": "ios", "deviceId": "phone", "language": "zh",
            ]
            let first = try await fx.live.signedLogin(appKey: fx.appKey, secret: fx.secret, login)
            let socket = try await IMTestClient.connect(port: fx.live.port, token: try #require(first.string("token")))
            let renewal = try await fx.live.signedLogin(appKey: fx.appKey, secret: fx.secret, login)
            #expect(renewal.data["renewed"] as? Bool == true)
            let ack = try await socket.request(
                "send",
                [
                    "toId": peer.userId, "chatType": "single", "msgType": "text", "content": "still here",
                    "clientMsgId": "c1",
                ])
            #expect(ack["fromId"] as? String == "tb_12345")
            #expect(try await socket.collect("account_conflict", for: .milliseconds(300)).isEmpty)

            var otherDevice = login
            otherDevice["deviceId"] = "tablet"
            otherDevice["deviceModel"] = "iPad Pro"
            _ = try await fx.live.signedLogin(appKey: fx.appKey, secret: fx.secret, otherDevice)
            let notice = try #require(try await socket.next("account_conflict")["data"] as? [String: Any])
            #expect(notice["deviceModel"] as? String == "iPad Pro")
            #expect(notice["device_model"] as? String == "iPad Pro")
            #expect(notice["text"] as? String == "您的账号在另一台设备（iPad Pro）登录，如非本人请修改密码。")
            #expect(try await socket.waitForClose()?.rawValue == 4500)
        }
    }

    /// A ban (`parley user ban`) reaches the gateway through NOTIFY: the session is told why, then closed (4501).
    @Test func aBanClosesTheAccountsSocketsWithItsReason() async throws {
        try await MessagingFixture.run { fx in
            let device = try await Self.device(fx, username: "mallory")
            let outcome = try await AccountBans(database: fx.database).ban(
                appId: fx.appId, userId: device.session.userId)
            #expect(outcome == .done(endedSessions: 1))
            let ended = try await device.socket.next("session_ended")
            #expect((ended["data"] as? [String: Any])?["reason"] as? String == "banned")
            #expect(try await device.socket.waitForClose()?.rawValue == 4501)
        }
    }

    @Test func logoutEndsTheConnection() async throws {
        try await MessagingFixture.run { fx in
            let device = try await Self.device(fx, username: "dave")
            #expect(try await fx.client.post("/api/auth/logout", token: device.session.accessToken).status == 200)
            let ended = try await device.socket.next("session_ended")
            #expect((ended["data"] as? [String: Any])?["reason"] as? String == "logout")
            #expect(try await device.socket.waitForClose()?.rawValue == 4501)
        }
    }

    @Test func expiredIMTokenIsToldAndClosed() async throws {
        try await MessagingFixture.run { fx in
            let updated = try await fx.live.auth.appRepository.update(
                appKey: fx.appKey,
                lifetimes: TokenLifetimeOverrides(im: 2))
            fx.live.auth.directory.upsert(try #require(updated))
            let device = try await Self.device(fx, username: "erin")
            let expiry = try await device.socket.next("token_expired", timeout: .seconds(10))
            #expect(expiry["type"] as? String == "token_expired")
            #expect(try await device.socket.waitForClose()?.rawValue == 4002)
        }
    }
}
