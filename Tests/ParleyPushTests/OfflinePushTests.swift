import Foundation
import ParleyCrypto
import ParleyLiveSupport
import ParleyPush
import ParleyTestSupport
import ParleyWebSocket
import Testing

/// Messages to offline recipients reach the mock APNs exactly once, as Apple's API expects them.
@Suite("Offline push through a mock APNs", .serialized, .enabled(if: MockAPNs.python != nil, "\(MockAPNs.unavailable)"))
struct OfflinePushTests {
    @Test func anOfflineRecipientGetsExactlyOnePushPerMessage() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(2)
            let (alice, bob) = (users[0], users[1])
            let token = PushFixture.token()
            try await fixture.bind(bob, token: token)
            let aliceToken = PushFixture.token()
            try await fixture.bind(alice, token: aliceToken)
            var ids: [String] = []
            for text in ["hello", "second", "third"] {
                ids.append(
                    try #require(
                        try await fixture.messaging.sendOK(alice, to: bob.userId, content: text)["id"] as? String))
            }
            try await fixture.drained()
            let pushes = fixture.mock.requests(token: token)
            #expect(pushes.count == 3, "\(pushes.map(\.status))")
            #expect(fixture.mock.requests(token: aliceToken).isEmpty, "the sender is not pushed")
            #expect(Set(pushes.compactMap { $0.ext["msg_id"] as? String }) == Set(ids))
            let first = try #require(pushes.first { $0.ext["msg_id"] as? String == ids[0] })
            #expect(first.status == 200, "\(first.reason ?? "")")
            #expect(
                first.keyId == fixture.provider.keyId && first.teamId == fixture.provider.teamId,
                "the mock verified the ES256 provider token with the app's public key")
            #expect(first.topic == PushFixture.bundleId)
            #expect(first.pushType == "alert")
            #expect(first.headers["apns-priority"] == "10")
            #expect(first.headers["apns-collapse-id"] == ids[0])
            let expiration = try #require(Int(first.headers["apns-expiration"] ?? ""))
            #expect(expiration > Int(Date().timeIntervalSince1970) + 3600)
            #expect(first.alert["title"] as? String == "user0", "a user without a nickname is named by their id")
            #expect(first.alert["body"] as? String == "hello")
            #expect(first.aps["sound"] as? String == "default")
            #expect(first.aps["mutable-content"] as? Int == 1)
            #expect(first.ext["type"] as? String == "chat")
            #expect(first.ext["conversation_id"] as? String == MessagingFixture.singleID(alice, bob))
            // The provider token verifies with the app's key here too, and is reused across pushes.
            let jwt = String(try #require(first.headers["authorization"]).dropFirst("bearer ".count))
            _ = try JWT.verifyES256(jwt, key: fixture.provider.key.verifyingKey)
            #expect(Set(pushes.compactMap { $0.headers["authorization"] }).count == 1)
        }
    }

    @Test func groupMessagesPushEveryOfflineMemberButTheSender() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(3)
            let tokens = users.map { _ in PushFixture.token() }
            for (user, token) in zip(users, tokens) { try await fixture.bind(user, token: token) }
            let (_, conversationId) = try await fixture.messaging.createGroup(users[0], members: [users[1], users[2]])
            try await fixture.drained() // group creation writes notify messages: never pushed
            #expect(fixture.mock.requests().isEmpty)
            let groupId = String(conversationId.dropFirst(3))
            try await fixture.messaging.sendOK(users[1], to: groupId, chatType: "group", content: "to the group")
            try await fixture.drained()
            #expect(fixture.mock.requests(token: tokens[1]).isEmpty)
            #expect(fixture.mock.requests(token: tokens[0]).count == 1)
            #expect(fixture.mock.requests(token: tokens[2]).count == 1)
            #expect(fixture.mock.requests(token: tokens[0]).first?.ext["conversation_id"] as? String == conversationId)
        }
    }

    @Test func previewSettingsHideWhatTheyShould() async throws {
        try await PushFixture.run(preview: .none) { fixture in
            let users = try await fixture.messaging.users(2)
            let token = PushFixture.token()
            try await fixture.bind(users[1], token: token)
            try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "a secret")
            try await fixture.drained()
            let push = try #require(fixture.mock.requests(token: token).first)
            #expect(push.alert["title"] == nil)
            #expect(push.alert["body"] as? String == "You have a new message")

            try await fixture.configure(appId: fixture.appId, provider: fixture.provider, preview: .sender)
            try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "another secret")
            try await fixture.drained()
            let second = try #require(fixture.mock.requests(token: token).last)
            #expect(second.alert["title"] as? String == "user0")
            #expect(second.alert["body"] as? String == "user0 sent you a message")
        }
    }

    @Test func callsRingThroughVoIPPushes() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(3)
            let (caller, withVoIP, withoutVoIP) = (users[0], users[1], users[2])
            let alertToken = PushFixture.token()
            let voipToken = PushFixture.token()
            try await fixture.bind(withVoIP, token: alertToken)
            try await fixture.bind(withVoIP, token: voipToken, vendor: "apns_voip")
            let onlyAlert = PushFixture.token()
            try await fixture.bind(withoutVoIP, token: onlyAlert)

            let call = try await fixture.messaging.sendOK(
                caller, to: withVoIP.userId, msgType: "callVideo",
                content: ["status": "calling"])
            try await fixture.messaging.sendOK(
                caller, to: withoutVoIP.userId, msgType: "callAudio",
                content: ["status": "calling"])
            try await fixture.drained()
            #expect(
                fixture.mock.requests(token: alertToken).isEmpty, "a user with a VoIP token gets no alert for a call")
            let voip = try #require(fixture.mock.requests(token: voipToken).first)
            #expect(fixture.mock.requests(token: voipToken).count == 1)
            #expect(voip.status == 200, "\(voip.reason ?? "")")
            #expect(voip.pushType == "voip")
            #expect(voip.topic == PushFixture.bundleId + ".voip")
            #expect(voip.payload["voip_caller_name"] as? String == "user0")
            #expect(voip.payload["voip_caller_id"] as? String == caller.userId)
            #expect(voip.payload["msg_id"] as? String == call["id"] as? String)
            // Seed 003: `ext` is a string whose JSON holds voip_ext.voip_media_type, as [String: String].
            #expect(voip.extString != nil, "ext must be a JSON string")
            #expect(voip.voipExt["type"] as? String == "call")
            #expect(voip.voipExt["msg_id"] as? String == call["id"] as? String)
            #expect(voip.voipExt["caller_id"] as? String == caller.userId)
            #expect(voip.voipExt["conversation_id"] as? String == MessagingFixture.singleID(caller, withVoIP))
            #expect(voip.voipExt["voip_ext"] as? [String: String] == ["voip_media_type": "video"])
            #expect(voip.aps.isEmpty)
            // Without a VoIP token: an alert.
            let fallback = try #require(fixture.mock.requests(token: onlyAlert).first)
            #expect(fallback.pushType == "alert")
            #expect(fallback.alert["body"] as? String == "[voice call]")
        }
    }

    /// The record of a call (ended, missed, with a duration) never rings: an ordinary alert on the APNs token.
    @Test func callRecordsNeverRing() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(2)
            let (caller, callee) = (users[0], users[1])
            let alertToken = PushFixture.token()
            let voipToken = PushFixture.token()
            try await fixture.bind(callee, token: alertToken)
            try await fixture.bind(callee, token: voipToken, vendor: "apns_voip")
            for content: [String: Any] in [
                ["status": "missed"], ["status": "ended", "durationSec": 42], ["durationSec": 3],
                ["status": "cancelled"],
            ] {
                try await fixture.messaging.sendOK(caller, to: callee.userId, msgType: "callAudio", content: content)
            }
            try await fixture.drained()
            #expect(fixture.mock.requests(token: voipToken).isEmpty, "a call record rang a phone")
            let alerts = fixture.mock.requests(token: alertToken)
            #expect(alerts.count == 4)
            #expect(alerts.allSatisfy { $0.pushType == "alert" && $0.alert["body"] as? String == "[voice call]" })
        }
    }

    /// Alerts carry the recipient's total unread as `badge` and `content-available: 1` (seed 000's badge and
    /// background handler); a zh session gets zh previews, custom messages by their content `type`.
    @Test func alertsCarryTheBadgeAndTheSessionsLanguage() async throws {
        try await PushFixture.run(environment: ["PARLEY_PUSH_POLL_MS": "0"]) { fixture in
            let push = fixture.live.app.push
            let users = try await fixture.messaging.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let bobToken = PushFixture.token()
            try await fixture.bind(bob, token: bobToken)
            // Carol's device logged in asking for Chinese.
            let login = try await fixture.client.post(
                "/api/auth/login",
                json: ["username": "user2", "password": "correct horse", "platform": "android"],
                headers: ["X-App-Key": fixture.messaging.appKey, "Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"])
            #expect(login.status == 200, "\(login.text)")
            let carolZh = try Session(login)
            let carolToken = PushFixture.token()
            try await fixture.bind(carolZh, token: carolToken)

            try await fixture.messaging.sendOK(alice, to: bob.userId, content: "one")
            try await fixture.messaging.sendOK(carol, to: bob.userId, content: "two")
            await push.deliverDueJobs()
            let first = fixture.mock.requests(token: bobToken)
            #expect(first.count == 2)
            #expect(first.allSatisfy { $0.aps["badge"] as? Int == 2 }, "\(first.map { $0.aps["badge"] ?? "-" })")
            #expect(first.allSatisfy { $0.aps["content-available"] as? Int == 1 })
            #expect(first.allSatisfy { $0.alert["body"] is String })

            // Bob reads the conversation with Alice: one unread left, then one more message makes two.
            let read = try await fixture.client.post(
                "/api/im/conversations/\(MessagingFixture.singleID(alice, bob))/read", json: ["seq": 1],
                token: bob.accessToken)
            #expect(read.status == 200, "\(read.text)")
            try await fixture.messaging.sendOK(alice, to: bob.userId, content: "three")
            await push.deliverDueJobs()
            #expect(fixture.mock.requests(token: bobToken).last?.aps["badge"] as? Int == 2)

            // Custom messages preview by their `type`, in the session's language.
            try await fixture.messaging.sendOK(
                alice, to: carol.userId, msgType: "custom", content: ["type": "audio", "duration_sec": 3])
            try await fixture.messaging.sendOK(alice, to: carol.userId, content: "你好")
            try await fixture.messaging.sendOK(
                alice, to: bob.userId, msgType: "custom", content: ["type": "flash_image", "w": 1])
            await push.deliverDueJobs()
            let zh = fixture.mock.requests(token: carolToken)
            #expect(Set(zh.compactMap { $0.alert["body"] as? String }) == ["[语音]", "你好"])
            #expect(zh.allSatisfy { $0.aps["badge"] as? Int == 2 })
            #expect(fixture.mock.requests(token: bobToken).last?.alert["body"] as? String == "[flash image]")
        }
    }

    @Test func noPushWhenMutedOrRevokedFirst() async throws {
        // The worker runs only when asked to here, so the revoke lands before delivery.
        try await PushFixture.run(environment: ["PARLEY_PUSH_POLL_MS": "0"]) { fixture in
            let push = fixture.live.app.push
            let users = try await fixture.messaging.users(3)
            let token = PushFixture.token()
            try await fixture.bind(users[1], token: token)
            let mutedToken = PushFixture.token()
            try await fixture.bind(users[2], token: mutedToken)
            try await fixture.messaging.sendOK(users[0], to: users[2].userId, content: "before muting")
            await push.deliverDueJobs()
            #expect(fixture.mock.requests(token: mutedToken).count == 1)
            let muted = try await fixture.client.patch(
                "/api/im/conversations/\(MessagingFixture.singleID(users[0], users[2]))", json: ["muted": true],
                token: users[2].accessToken)
            #expect(muted.status == 200, "\(muted.text)")

            try await fixture.messaging.sendOK(users[0], to: users[2].userId, content: "muted")
            let message = try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "oops")
            let id = try #require(message["id"] as? String)
            let revoked = try await fixture.client.post("/api/im/messages/\(id)/revoke", token: users[0].accessToken)
            #expect(revoked.status == 200, "\(revoked.text)")
            #expect(try await fixture.jobCount() == 2)
            await push.deliverDueJobs()
            #expect(try await fixture.jobCount() == 0)
            #expect(fixture.mock.requests(token: token).isEmpty, "a message revoked before delivery is not pushed")
            #expect(fixture.mock.requests(token: mutedToken).count == 1, "a muted conversation is not pushed")
        }
    }

    /// A mention gets through a muted conversation: by id, and everybody (`all`) from the group's owner.
    @Test func mentionsArePushedThroughAMute() async throws {
        try await PushFixture.run(environment: ["PARLEY_PUSH_POLL_MS": "0"]) { fixture in
            let push = fixture.live.app.push
            let users = try await fixture.messaging.users(3)
            let (owner, member, muted) = (users[0], users[1], users[2])
            let token = PushFixture.token()
            try await fixture.bind(muted, token: token)
            let group = try await fixture.messaging.createGroup(owner, name: "Loud", members: [member, muted])
            let mute = try await fixture.client.patch(
                "/api/im/conversations/\(group.conversationId)", json: ["muted": true], token: muted.accessToken)
            #expect(mute.status == 200, "\(mute.text)")
            func send(_ from: Session, _ text: String, mentions: [String: Any]?) async throws {
                var body: [String: Any] = [
                    "toId": group.groupId, "chatType": "group", "msgType": "text", "content": text,
                ]
                if let mentions { body["mentions"] = mentions }
                let sent = try await fixture.client.post("/api/im/messages", json: body, token: from.accessToken)
                #expect(sent.status == 201, "\(sent.text)")
            }
            try await send(member, "quiet", mentions: nil)
            try await send(member, "hey you", mentions: ["userIds": [muted.userId]])
            try await send(member, "hey other", mentions: ["userIds": [owner.userId]])
            try await send(owner, "all hands", mentions: ["all": true])
            await push.deliverDueJobs()
            #expect(try await fixture.jobCount() == 0)
            let bodies = fixture.mock.requests(token: token).compactMap { $0.alert["body"] as? String }
            #expect(
                bodies.count == 2 && bodies.contains { $0.hasSuffix("hey you") }
                    && bodies.contains { $0.hasSuffix("all hands") }, "\(bodies)")
        }
    }

    @Test func deadTokensAreRemovedAndRetriesSkipTokensAlreadyPushed() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(2)
            let bob = users[1]
            // Bob's devices: a dead one (400 BadDeviceToken), an uninstalled app (410), a flaky path (503 once),
            // and a healthy one.
            let bad = PushFixture.token("badd")
            let gone = PushFixture.token("dead")
            let flaky = PushFixture.token("fa11")
            let healthy = PushFixture.token("0000")
            for (index, token) in [bad, gone, flaky, healthy].enumerated() {
                // One session per device: log in four times on distinct platforms.
                let platform = ["ios", "android", "web", "desktop"][index]
                let session =
                    index == 0
                    ? bob
                    : try Session(
                        try await fixture.client.login(
                            appKey: fixture.messaging.appKey, username: "user1", platform: platform))
                try await fixture.bind(session, token: token)
            }
            try await fixture.messaging.sendOK(users[0], to: bob.userId, content: "ping")
            try await fixture.drained(timeout: .seconds(15))
            #expect(try await fixture.tokenOwner(bad) == nil, "BadDeviceToken removes the token")
            #expect(try await fixture.tokenOwner(gone) == nil, "410 removes the token")
            #expect(try await fixture.tokenOwner(flaky) != nil)
            #expect(try await fixture.tokenOwner(healthy) != nil)
            #expect(fixture.mock.requests(token: flaky).map(\.status) == [503, 200], "retried after backoff")
            #expect(fixture.mock.requests(token: healthy).map(\.status) == [200], "a retried job skips pushed tokens")
            #expect(fixture.mock.requests(token: bad).count == 1)
            #expect(fixture.mock.requests(token: gone).count == 1)
        }
    }

    @Test func anOnlineRecipientGetsNoPush() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(2)
            let token = PushFixture.token()
            try await fixture.bind(users[1], token: token)
            let socket = try await OnlineDevice.connect(port: fixture.live.port, imToken: users[1].imToken)
            #expect(try await eventually { try await fixture.presenceCount(users[1].userId) == 1 } != nil)
            try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "you are online")
            try await fixture.drained()
            #expect(fixture.mock.requests(token: token).isEmpty)

            await socket.close()
            #expect(
                try await eventually { try await fixture.presenceCount(users[1].userId) == 0 } != nil,
                "a closed connection leaves the presence table")
            try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "you left")
            try await fixture.drained()
            #expect(fixture.mock.requests(token: token).count == 1)
        }
    }

    @Test func aStaleInstancesConnectionsCountAsOffline() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(2)
            let token = PushFixture.token()
            try await fixture.bind(users[1], token: token)
            // A crashed instance left a presence row: it counts only while the instance heartbeats.
            _ = try await fixture.database.query(
                """
                INSERT INTO realtime_instances (id, last_seen) VALUES ('crashed', now() - interval '1 minute');
                """)
            _ = try await fixture.database.query(
                """
                INSERT INTO realtime_presence (instance_id, connection_id, app_id, user_id, session_id)
                VALUES ('crashed', 1, \(fixture.appId), \(users[1].userId), \(users[1].sessionId))
                """)
            try await fixture.messaging.sendOK(users[0], to: users[1].userId)
            try await fixture.drained()
            #expect(fixture.mock.requests(token: token).count == 1)
        }
    }

    @Test func oneAppsTokensAndKeysAreNeverUsedForAnother() async throws {
        let second = MockAPNs.Provider(keyId: "KEY0000002", teamId: "TEAM000002", key: try P256.SigningKey.generate())
        let mock = try await MockAPNs(providers: [second])
        defer { mock.stop() }
        try await PushFixture.run { fixture in
            // A second tenant with its own key and endpoint, and a third without push.
            let (otherApp, _) = try await fixture.live.createApp(name: "Other")
            let (quietApp, _) = try await fixture.live.createApp(name: "Quiet")
            var update = PushSettingsRepository.Update()
            update.enabled = true
            update.teamId = second.teamId
            update.keyId = second.keyId
            update.sealedKey = try PushKeyBox(masterKey: fixture.live.auth.configuration.masterKey)
                .seal(pem: second.key.pem, appId: otherApp.id)
            update.bundleId = PushFixture.bundleId
            update.endpoint = mock.endpoint
            try await fixture.live.app.push.settings.update(appId: otherApp.id, update)

            let here = try await fixture.messaging.users(2)
            let there = MessagingFixture(live: fixture.live, appKey: otherApp.appKey, appId: otherApp.id)
            let thereUsers = try await there.users(2, prefix: "other")
            let quiet = MessagingFixture(live: fixture.live, appKey: quietApp.appKey, appId: quietApp.id)
            let quietUsers = try await quiet.users(2, prefix: "quiet")
            // The same device token registered in all three apps: three rows, one per tenant.
            let shared = PushFixture.token()
            try await fixture.bind(here[1], token: shared)
            try await fixture.bind(thereUsers[1], token: shared)
            try await fixture.bind(quietUsers[1], token: shared)
            let rows = try await fixture.database.query("SELECT count(*) AS n FROM push_tokens WHERE token = \(shared)")
            #expect(try rows[0].decode("n", as: Int.self) == 3)

            try await quiet.sendOK(quietUsers[0], to: quietUsers[1].userId, content: "no push here")
            #expect(try await fixture.jobCount() == 0, "an app without push queues nothing")
            try await there.sendOK(thereUsers[0], to: thereUsers[1].userId, content: "from the other app")
            try await fixture.drained()
            #expect(fixture.mock.requests().isEmpty, "the first app's endpoint and key are not used")
            let pushed = mock.requests(token: shared)
            #expect(pushed.count == 1)
            #expect(pushed.first?.keyId == second.keyId && pushed.first?.status == 200)
            #expect(pushed.first?.alert["body"] as? String == "from the other app")

            try await fixture.messaging.sendOK(here[0], to: here[1].userId, content: "from the first app")
            try await fixture.drained()
            #expect(mock.requests().count == 1)
            #expect(fixture.mock.requests(token: shared).map(\.keyId) == [fixture.provider.keyId])
        }
    }
}

/// A connected gateway device (a real WebSocket held open on its own thread).
final class OnlineDevice: @unchecked Sendable {
    let client: WebSocketClient

    private init(client: WebSocketClient) { self.client = client }

    static func connect(port: UInt16, imToken: String) async throws -> OnlineDevice {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                do {
                    let client = try WebSocketClient(
                        port: port, path: "/ws", headers: [("Authorization", "Bearer \(imToken)")],
                        timeout: .seconds(10))
                    _ = try client.receiveMessage(timeout: .seconds(10)) // hello
                    continuation.resume(returning: OnlineDevice(client: client))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    func close() async {
        let client = client
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                try? client.close()
                continuation.resume()
            }
        }
    }
}

extension PushFixture {
    func presenceCount(_ userId: String) async throws -> Int {
        try await database.query(
            """
            SELECT count(*) AS n FROM realtime_presence WHERE app_id = \(appId) AND user_id = \(userId)
            """)[0].decode("n", as: Int.self)
    }
}
