import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyLiveSupport
import ParleyPush
import ParleyTestSupport
import Testing

/// Messages to offline recipients with Android phones reach mock FCM and HMS servers, which check the OAuth
/// exchanges and the payloads as Google and Huawei do.
@Suite(
    "Offline push through mock FCM and HMS", .serialized,
    .enabled(if: MockAPNs.python != nil, "\(MockAPNs.unavailable)"))
struct AndroidPushTests {
    /// A push fixture (APNs configured as before) whose app also has FCM and HMS credentials pointing at mocks.
    static func run(_ body: (PushFixture, MockVendorServer, MockVendorServer) async throws -> Void) async throws {
        let project = try MockFCMProject()
        let fcm = try await project.start()
        defer { fcm.stop() }
        let hms = try await MockHMSApp.start()
        defer { hms.stop() }
        try await PushFixture.run { fixture in
            let box = PushKeyBox(masterKey: try MasterKey(parsing: fixture.live.masterKeyHex))
            var update = PushVendorSettingsRepository.Update()
            update.fcmProjectId = MockFCMProject.projectId
            update.sealedFCMServiceAccount = try box.sealFCMServiceAccount(
                project.serviceAccountJSON, appId: fixture.appId)
            update.fcmEndpoint = fcm.endpoint
            update.fcmTokenURI = fcm.endpoint + "/token"
            update.hmsAppId = MockHMSApp.appId
            update.sealedHMSClientSecret = try box.sealHMSClientSecret(MockHMSApp.clientSecret, appId: fixture.appId)
            update.hmsEndpoint = hms.endpoint
            update.hmsOAuthEndpoint = hms.endpoint
            try await PushVendorSettingsRepository(database: fixture.live.app.database).update(
                appId: fixture.appId, update)
            try await body(fixture, fcm, hms)
        }
    }

    /// A random FCM or HMS token starting with `prefix`.
    static func token(_ prefix: String = "") -> String {
        prefix + "t" + Hex.encode(SecureRandom.bytes(40))
    }

    @Test func fcmDeliversChatAsNotificationsWithOneAccessToken() async throws {
        try await Self.run { fixture, fcm, _ in
            let users = try await fixture.messaging.users(2)
            let (alice, bob) = (users[0], users[1])
            let token = Self.token()
            try await fixture.bind(bob, token: token, vendor: "fcm", environment: "production")
            var ids: [String] = []
            for text in ["hello", "second", "third"] {
                ids.append(
                    try #require(
                        try await fixture.messaging.sendOK(alice, to: bob.userId, content: text)["id"] as? String))
            }
            try await fixture.drained()
            let sends = fcm.sends(token: token)
            #expect(sends.count == 3, "\(sends.map(\.status))")
            #expect(sends.allSatisfy { $0.status == 200 }, "\(sends.map(\.reply))")
            #expect(Set(sends.compactMap { $0.data["msg_id"] as? String }) == Set(ids))
            let first = try #require(sends.first { $0.data["msg_id"] as? String == ids[0] })
            #expect(first.notification as? [String: String] == ["title": "user0", "body": "hello"])
            #expect(first.data["type"] as? String == "chat")
            #expect(first.data["conversation_id"] as? String == MessagingFixture.singleID(alice, bob))
            #expect(first.android["priority"] as? String == "high")
            #expect((first.android["notification"] as? [String: Any])?["tag"] as? String == ids[0])
            // One OAuth exchange for every push: the mock verified the RS256 assertion with the account's key.
            let exchanges = fcm.tokenRequests
            #expect(exchanges.count == 1)
            let exchange = try #require(exchanges.first)
            #expect(exchange.status == 200, "\(exchange.reply)")
            #expect(exchange.claims["iss"] as? String == MockFCMProject.clientEmail)
            #expect(exchange.claims["aud"] as? String == FCMServiceAccount.defaultTokenURI)
            let issuedAt = try #require(exchange.claims["iat"] as? Int)
            #expect(exchange.claims["exp"] as? Int == issuedAt + 3600)
            #expect(Set(sends.compactMap(\.bearer)) == [exchange.reply["access_token"] as? String])
            #expect(fixture.mock.requests().isEmpty, "nothing went to APNs")
        }
    }

    @Test func fcmRenewsAnAccessTokenItRefuses() async throws {
        try await Self.run { fixture, fcm, _ in
            let users = try await fixture.messaging.users(2)
            let token = Self.token()
            try await fixture.bind(users[1], token: token, vendor: "fcm", environment: "production")
            try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "before")
            try await fixture.drained()
            try fcm.revokeAccessTokens()
            try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "after")
            try await fixture.drained()
            let sends = fcm.sends(token: token)
            try #require(sends.map(\.status) == [200, 401, 200])
            #expect(fcm.tokenRequests.map(\.status) == [200, 200])
            #expect(sends[1].bearer == sends[0].bearer && sends[2].bearer != sends[0].bearer)
            #expect((sends[2].notification["body"] as? String) == "after")
        }
    }

    @Test func tokensTheVendorsCallDeadAreRemoved() async throws {
        try await Self.run { fixture, fcm, hms in
            let users = try await fixture.messaging.users(5)
            let unregistered = Self.token("dead")
            let malformed = Self.token("badd")
            let hmsInvalid = Self.token("badd")
            let flaky = Self.token("fa11")
            let alive = Self.token()
            try await fixture.bind(users[1], token: unregistered, vendor: "fcm", environment: "production")
            try await fixture.bind(users[2], token: malformed, vendor: "fcm", environment: "production")
            try await fixture.bind(users[3], token: hmsInvalid, vendor: "hms", environment: "production")
            try await fixture.bind(users[4], token: flaky, vendor: "fcm", environment: "production")
            try await fixture.bind(users[4], token: alive, vendor: "hms", environment: "production")
            let (_, conversationId) = try await fixture.messaging.createGroup(
                users[0], members: Array(users[1...]))
            try await fixture.drained()
            try await fixture.messaging.sendOK(
                users[0], to: String(conversationId.dropFirst(3)), chatType: "group", content: "to everyone")
            try await fixture.drained()
            #expect(fcm.sends(token: unregistered).map(\.status) == [404])
            #expect(fcm.sends(token: malformed).map(\.status) == [400])
            #expect(hms.sends(token: hmsInvalid).map { $0.reply["code"] as? String } == ["80300007"])
            for dead in [unregistered, malformed, hmsInvalid] {
                #expect(try await fixture.tokenOwner(dead) == nil, "\(dead.prefix(5)) removed")
            }
            // A 503 is retried with backoff; the token pushed already is not pushed again.
            #expect(fcm.sends(token: flaky).map(\.status) == [503, 200])
            #expect(hms.sends(token: alive).map { $0.reply["code"] as? String } == ["80000000"])
            #expect(try await fixture.tokenOwner(flaky)?.userId == users[4].userId)
            #expect(try await fixture.tokenOwner(alive)?.userId == users[4].userId)
        }
    }

    @Test func hmsDeliversChatAndRenewsAnExpiredAccessToken() async throws {
        try await Self.run { fixture, _, hms in
            let users = try await fixture.messaging.users(2)
            let token = Self.token()
            try await fixture.bind(users[1], token: token, vendor: "hms", environment: "production")
            let sent = try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "你好")
            let id = try #require(sent["id"] as? String)
            try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "again")
            try await fixture.drained()
            let sends = hms.sends(token: token)
            #expect(sends.map { $0.reply["code"] as? String } == ["80000000", "80000000"])
            let first = try #require(
                sends.first { ($0.android["notification"] as? [String: Any])?["body"] as? String == "你好" })
            let shown = try #require(first.android["notification"] as? [String: Any])
            #expect(shown["title"] as? String == "user0")
            #expect(shown["click_action"] as? [String: Int] == ["type": 3])
            let data = try #require(
                (first.message["data"] as? String).flatMap {
                    try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]
                })
            #expect(data["msg_id"] == id && data["type"] == "chat")
            #expect(hms.tokenRequests.count == 1, "one client-credentials exchange for both pushes")

            try hms.revokeAccessTokens()
            try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "after")
            try await fixture.drained()
            #expect(hms.sends(token: token).dropFirst(2).map(\.status) == [401, 200])
            #expect(hms.tokenRequests.map(\.status) == [200, 200])
        }
    }

    @Test func anAppWithoutAPNsCredentialsStillPushesToAndroid() async throws {
        try await Self.run { fixture, fcm, hms in
            _ = try await fixture.database.query(
                """
                UPDATE app_push_settings SET apns_team_id = NULL, apns_key_id = NULL,
                    apns_private_key_ciphertext = NULL, apns_bundle_id = NULL
                WHERE app_id = \(fixture.appId)
                """)
            let users = try await fixture.messaging.users(2)
            let apnsToken = PushFixture.token()
            let fcmToken = Self.token()
            let hmsToken = Self.token()
            try await fixture.bind(users[1], token: apnsToken)
            try await fixture.bind(users[1], token: fcmToken, vendor: "fcm", environment: "production")
            try await fixture.bind(users[1], token: hmsToken, vendor: "hms", environment: "production")
            try await fixture.messaging.sendOK(users[0], to: users[1].userId, content: "to Android only")
            try await fixture.drained()
            #expect(fcm.sends(token: fcmToken).map(\.status) == [200])
            #expect(hms.sends(token: hmsToken).map(\.status) == [200])
            #expect(fixture.mock.requests().isEmpty, "no APNs credentials: the iOS token is skipped")
            #expect(try await fixture.tokenOwner(apnsToken)?.userId == users[1].userId, "and kept")
            #expect(!fixture.live.sink.capturedText.contains("without APNs credentials"))
        }
    }

    @Test func callsReachAndroidPhonesAsHighPriorityDataMessages() async throws {
        try await Self.run { fixture, fcm, hms in
            let users = try await fixture.messaging.users(3)
            let fcmToken = Self.token()
            let hmsToken = Self.token()
            try await fixture.bind(users[1], token: fcmToken, vendor: "fcm", environment: "production")
            try await fixture.bind(users[2], token: hmsToken, vendor: "hms", environment: "production")
            let call = try await fixture.messaging.sendOK(
                users[0], to: users[1].userId, msgType: "callVideo", content: ["status": "calling"])
            try await fixture.messaging.sendOK(
                users[0], to: users[2].userId, msgType: "callAudio", content: ["status": "calling"])
            try await fixture.drained()
            let ring = try #require(fcm.sends(token: fcmToken).first)
            #expect(ring.status == 200, "\(ring.reply)")
            #expect(ring.message["notification"] == nil)
            #expect(ring.android["priority"] as? String == "high")
            #expect(ring.data["voip_caller_name"] as? String == "user0")
            #expect(ring.data["msg_id"] as? String == call["id"] as? String)
            let ext = try #require(
                (ring.data["ext"] as? String).flatMap {
                    try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                })
            #expect((ext["voip_ext"] as? [String: String])?["voip_media_type"] == "video")
            let hmsRing = try #require(hms.sends(token: hmsToken).first)
            #expect(hmsRing.reply["code"] as? String == "80000000")
            #expect(hmsRing.android["urgency"] as? String == "HIGH" && hmsRing.android["notification"] == nil)
            #expect((hmsRing.message["data"] as? String)?.contains("voip_caller_name") == true)
        }
    }
}
