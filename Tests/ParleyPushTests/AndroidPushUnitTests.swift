import Foundation
import ParleyCrypto
import ParleyJSON
import Synchronization
import Testing

@testable import ParleyPush

@Suite("Push to Android: FCM and HMS messages, their answers, access tokens, service accounts (pure)")
struct AndroidPushUnitTests {
    static func notification(_ kind: PushNotification.Kind, payload: [UInt8], vendor: PushVendor = .fcm)
        -> PushNotification
    {
        PushNotification(
            vendor: vendor, token: "fcm-token-0123456789", environment: .production, bundleId: "", kind: kind,
            payload: payload, collapseId: "42", expiration: 1_000_060)
    }

    static let alert = PushPayload.alert(for: PushUnitTests.message(), preview: .full, badge: 3)
    static let voip = PushPayload.voip(
        for: PushUnitTests.message("callVideo", content: #"{"status":"calling"}"#), media: "video", preview: .full)

    @Test func everyVendorSaysWhatTheAPNsPayloadSays() {
        let chat = AndroidPushContent(apnsPayload: Self.alert)
        #expect(
            chat
                == AndroidPushContent(
                    title: "Alice", body: "hi there", badge: 3, sound: "default",
                    data: [("type", "chat"), ("conversation_id", "si:a:b"), ("msg_id", "42")]))
        #expect(chat.isNotification)
        let call = AndroidPushContent(apnsPayload: Self.voip)
        #expect(!call.isNotification && call.title == nil && call.badge == nil)
        #expect(call.data.map(\.0) == ["voip_caller_name", "voip_caller_id", "msg_id", "ext"])
        // The VoIP `ext` stays the JSON string seed 003 parses; numbers become their text.
        let ext = call.data.first { $0.0 == "ext" }?.1 ?? ""
        #expect((try? JSONValue.parse(Array(ext.utf8)))?["voip_ext"]?["voip_media_type"]?.stringValue == "video")
        let odd = AndroidPushContent(apnsPayload: Array(#"{"aps":{"alert":"plain"},"n":5,"o":{"b":true}}"#.utf8))
        #expect(odd == AndroidPushContent(body: "plain", data: [("n", "5"), ("b", "true")]))
        #expect(AndroidPushContent(apnsPayload: Array("not json".utf8)) == AndroidPushContent(data: []))
    }

    @Test func fcmChatIsANotificationMessageAndACallAHighPriorityDataMessage() throws {
        let chat = try PushUnitTests.json(
            FCMMessage.body(for: Self.notification(.alert, payload: Self.alert), now: 1_000_000))
        let message = try #require(chat["message"] as? [String: Any])
        #expect(message["token"] as? String == "fcm-token-0123456789")
        #expect(message["notification"] as? [String: String] == ["title": "Alice", "body": "hi there"])
        #expect(message["data"] as? [String: String] == ["type": "chat", "conversation_id": "si:a:b", "msg_id": "42"])
        let android = try #require(message["android"] as? [String: Any])
        #expect(android["priority"] as? String == "high")
        #expect(android["ttl"] as? String == "60s")
        let shown = try #require(android["notification"] as? [String: Any])
        #expect(shown["tag"] as? String == "42", "a retried push replaces its notification")
        #expect(shown["notification_count"] as? Int == 3)
        #expect(shown["default_sound"] as? Bool == true)

        let call = try PushUnitTests.json(
            FCMMessage.body(for: Self.notification(.voip, payload: Self.voip), now: 1_000_100))
        let callMessage = try #require(call["message"] as? [String: Any])
        #expect(callMessage["notification"] == nil, "data only: the app rings itself")
        let data = try #require(callMessage["data"] as? [String: String])
        #expect(data["voip_caller_name"] == "Alice" && data["msg_id"] == "42")
        #expect(callMessage["android"] as? [String: String] == ["priority": "high", "ttl": "0s"])
    }

    @Test func fcmAnswersMapToOutcomes() {
        func error(_ status: Int, _ grpc: String, _ message: String = "", details: String = "[]") -> [UInt8] {
            Array(
                #"{"error":{"code":\#(status),"message":"\#(message)","status":"\#(grpc)","details":\#(details)}}"#.utf8
            )
        }
        func fcmError(_ code: String) -> String {
            #"[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"\#(code)"}]"#
        }
        func violation(_ field: String) -> String {
            #"[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"\#(field)"}]}]"#
        }
        #expect(FCMMessage.outcome(status: 200, body: Array(#"{"name":"projects/p/messages/1"}"#.utf8)) == .delivered)
        #expect(
            FCMMessage.outcome(status: 404, body: error(404, "NOT_FOUND", details: fcmError("UNREGISTERED")))
                == .invalidToken(reason: "UNREGISTERED"))
        #expect(FCMMessage.outcome(status: 404, body: error(404, "NOT_FOUND")) == .invalidToken(reason: "NOT_FOUND"))
        #expect(
            FCMMessage.outcome(
                status: 400,
                body: error(
                    400, "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token",
                    details: fcmError("INVALID_ARGUMENT")))
                == .invalidToken(reason: "INVALID_ARGUMENT (registration token)"))
        #expect(
            FCMMessage.outcome(status: 400, body: error(400, "INVALID_ARGUMENT", details: violation("message.token")))
                == .invalidToken(reason: "INVALID_ARGUMENT (registration token)"))
        // An invalid payload is not the token's fault: the token stays.
        #expect(
            FCMMessage.outcome(
                status: 400,
                body: error(400, "INVALID_ARGUMENT", "registration token", details: violation("message.data[0].value")))
                == .rejected(reason: "INVALID_ARGUMENT"))
        #expect(
            FCMMessage.outcome(
                status: 403, body: error(403, "PERMISSION_DENIED", details: fcmError("SENDER_ID_MISMATCH")))
                == .invalidToken(reason: "SENDER_ID_MISMATCH"))
        #expect(
            FCMMessage.outcome(status: 429, body: error(429, "RESOURCE_EXHAUSTED", details: fcmError("QUOTA_EXCEEDED")))
                == .retry(reason: "QUOTA_EXCEEDED"))
        #expect(FCMMessage.outcome(status: 503, body: error(503, "UNAVAILABLE")) == .retry(reason: "UNAVAILABLE"))
        #expect(FCMMessage.outcome(status: 500, body: Array("oops".utf8)) == .retry(reason: "HTTP 500"))
        #expect(FCMMessage.outcome(status: 413, body: []) == .rejected(reason: "HTTP 413"))
    }

    @Test func hmsChatIsANotificationAndACallAnUrgentDataMessage() throws {
        let chat = try PushUnitTests.json(
            HMSMessage.body(for: Self.notification(.alert, payload: Self.alert, vendor: .hms), now: 1_000_000))
        #expect(chat["validate_only"] as? Bool == false)
        let message = try #require(chat["message"] as? [String: Any])
        #expect(message["token"] as? [String] == ["fcm-token-0123456789"])
        let data = try PushUnitTests.json(Array(try #require(message["data"] as? String).utf8))
        #expect(data as? [String: String] == ["type": "chat", "conversation_id": "si:a:b", "msg_id": "42"])
        let android = try #require(message["android"] as? [String: Any])
        #expect(android["ttl"] as? String == "60s" && android["category"] as? String == "IM")
        let shown = try #require(android["notification"] as? [String: Any])
        #expect(shown["title"] as? String == "Alice" && shown["body"] as? String == "hi there")
        #expect(shown["click_action"] as? [String: Int] == ["type": 3])
        #expect(shown["tag"] as? String == "42")

        let untitled = PushPayload.alert(for: PushUnitTests.message(), preview: .none, badge: 0)
        let hidden = try PushUnitTests.json(
            HMSMessage.body(for: Self.notification(.alert, payload: untitled, vendor: .hms), now: 1_000_000))
        let hiddenShown = ((hidden["message"] as? [String: Any])?["android"] as? [String: Any])?["notification"]
        #expect(
            hiddenShown as? [String: Any] as NSDictionary?
                == [
                    "title": "You have a new message", "body": "You have a new message", "click_action": ["type": 3],
                    "tag": "42", "default_sound": true,
                ] as NSDictionary, "Push Kit needs a title: the body stands in")

        let call = try PushUnitTests.json(
            HMSMessage.body(for: Self.notification(.voip, payload: Self.voip, vendor: .hms), now: 1_000_000))
        let callAndroid = try #require((call["message"] as? [String: Any])?["android"] as? [String: String])
        #expect(callAndroid == ["ttl": "60s", "urgency": "HIGH", "category": "VOIP"])
    }

    @Test func hmsAnswersMapToOutcomes() {
        func answer(_ code: String, _ msg: String = "x") -> [UInt8] {
            Array(#"{"code":"\#(code)","msg":"\#(msg)","requestId":"r"}"#.utf8)
        }
        let token = "hms-token-0123456789"
        #expect(HMSMessage.outcome(status: 200, body: answer("80000000"), token: token) == .delivered)
        #expect(
            HMSMessage.outcome(status: 200, body: answer("80300007", "All the tokens are invalid"), token: token)
                == .invalidToken(reason: "80300007 All the tokens are invalid"))
        let partial = answer("80100000", #"{\"success\":0,\"failure\":1,\"illegal_tokens\":[\"\#(token)\"]}"#)
        #expect(
            HMSMessage.outcome(status: 200, body: partial, token: token)
                == .invalidToken(reason: "80100000 " + #"{"success":0,"failure":1,"illegal_tokens":["\#(token)"]}"#))
        #expect(HMSMessage.outcome(status: 200, body: answer("80100000", "{}"), token: token) == .delivered)
        #expect(HMSMessage.outcome(status: 500, body: answer("81000001"), token: token) == .retry(reason: "81000001 x"))
        #expect(HMSMessage.outcome(status: 503, body: [], token: token) == .retry(reason: "HTTP 503"))
        #expect(
            HMSMessage.outcome(status: 400, body: answer("80300008"), token: token) == .rejected(reason: "80300008 x"))
        #expect(HMSMessage.refusesAccessToken(status: 401, body: answer("80200003")))
        #expect(HMSMessage.refusesAccessToken(status: 200, body: answer("80200001")))
        #expect(!HMSMessage.refusesAccessToken(status: 200, body: answer("80300007")))
    }

    /// Counts token requests; each returns a new token living `lifetime` seconds.
    final class Issuer: Sendable {
        let issued = Mutex(0)
        let lifetime: Int
        init(lifetime: Int = 3600) { self.lifetime = lifetime }
        @Sendable func fetch() async throws -> OAuthAccessToken {
            let n = issued.withLock { count in
                count += 1
                return count
            }
            return OAuthAccessToken(value: "token-\(n)", expiresIn: lifetime)
        }
    }

    @Test func accessTokensAreSharedCachedAndRenewedBeforeTheyExpire() async throws {
        let clock = Mutex(1_000_000)
        let tokens = OAuthAccessTokens(now: { clock.withLock { $0 } })
        let issuer = Issuer()
        let key = OAuthAccessTokens.Key(vendor: .fcm, appId: 1, client: "a")
        // Pushes that find no token share one request, however they interleave.
        let all = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<8 { group.addTask { try? await tokens.token(for: key, fetch: issuer.fetch) } }
            var all: [String?] = []
            for await token in group { all.append(token) }
            return all
        }
        #expect(Set(all) == ["token-1"])
        #expect(issuer.issued.withLock { $0 } == 1)
        clock.withLock { $0 += 3600 - 301 }
        #expect(try await tokens.token(for: key, fetch: issuer.fetch) == "token-1")
        clock.withLock { $0 += 1 }
        #expect(try await tokens.token(for: key, fetch: issuer.fetch) == "token-2", "renewed five minutes early")
        // Another app or credential has its own token.
        #expect(
            try await tokens.token(for: .init(vendor: .fcm, appId: 2, client: "a"), fetch: issuer.fetch) == "token-3")
        #expect(
            try await tokens.token(for: .init(vendor: .hms, appId: 1, client: "a"), fetch: issuer.fetch) == "token-4")
        // A refused token is dropped; forgetting one already replaced keeps the new one.
        tokens.invalidate(key, token: "token-1")
        #expect(try await tokens.token(for: key, fetch: issuer.fetch) == "token-2")
        tokens.invalidate(key, token: "token-2")
        #expect(try await tokens.token(for: key, fetch: issuer.fetch) == "token-5")
        // A failed request caches nothing.
        struct Down: Error {}
        let other = OAuthAccessTokens.Key(vendor: .fcm, appId: 3, client: "a")
        await #expect(throws: Down.self) { try await tokens.token(for: other) { throw Down() } }
        #expect(try await tokens.token(for: other, fetch: issuer.fetch) == "token-6")
        #expect(OAuthAccessTokens.renewalMargin(expiresIn: 120) == 60, "short-lived tokens renew at half-life")
    }

    @Test func serviceAccountFilesAreCheckedWhole() throws {
        let key = try RSA.SigningKey.generate()
        func file(_ change: (inout [String: Any]) -> Void) -> [UInt8] {
            var object: [String: Any] = [
                "type": "service_account", "project_id": "my-app-1", "private_key_id": "abc",
                "private_key": key.pem, "client_email": "push@my-app-1.iam.gserviceaccount.com",
                "token_uri": "https://oauth2.googleapis.com/token",
            ]
            change(&object)
            return Array(try! JSONSerialization.data(withJSONObject: object))
        }
        let account = try FCMServiceAccount(json: file { _ in })
        #expect(account.projectId == "my-app-1" && account.privateKeyId == "abc")
        #expect(account.clientEmail == "push@my-app-1.iam.gserviceaccount.com")
        #expect(
            try FCMServiceAccount(json: file { $0["token_uri"] = nil }).tokenURI == FCMServiceAccount.defaultTokenURI)
        let refusals: [(String, [UInt8])] = [
            ("not a JSON object", Array("[1]".utf8)),
            ("not a JSON object", Array("{".utf8)),
            ("type is not \"service_account\"", file { $0["type"] = "authorized_user" }),
            ("project_id is missing", file { $0["project_id"] = nil }),
            ("client_email is missing", file { $0["client_email"] = "" }),
            ("private_key is missing", file { $0["private_key"] = nil }),
            ("token_uri is not an http(s) URL", file { $0["token_uri"] = "ftp://x" }),
            ("project_id has characters a project id never has", file { $0["project_id"] = "a/b" }),
        ]
        for (reason, json) in refusals {
            #expect(throws: FCMServiceAccount.Invalid(description: reason)) { try FCMServiceAccount(json: json) }
        }
        #expect(throws: FCMServiceAccount.Invalid.self) {
            try FCMServiceAccount(json: file { $0["private_key"] = try! P256.SigningKey.generate().pem })
        }
    }

    @Test func tokenRequestsAreFormEncoded() {
        #expect(
            OAuthTokenRequest.encode([("grant_type", "client_credentials"), ("client_secret", "a+b/c=d&e f")])
                == "grant_type=client_credentials&client_secret=a%2Bb%2Fc%3Dd%26e%20f")
        #expect(
            OAuthTokenRequest.encode([("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer")])
                == "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer")
    }

    @Test func androidTokensGetAlertsAndCallsAsDataMessages() {
        func target(_ user: String, _ vendor: PushVendor) -> PushTarget {
            PushTarget(
                userId: user, vendor: vendor, token: "\(user)-\(vendor.rawValue)", environment: .production,
                bundleId: "")
        }
        let tokens = [target("u1", .fcm), target("u1", .apnsVoip), target("u2", .hms), target("u2", .apns)]
        let chat = PushPayload.plan(for: PushUnitTests.message(), tokens: tokens)
        #expect(chat.map { "\($0.0.token):\($0.1.rawValue)" } == ["u1-fcm:alert", "u2-hms:alert", "u2-apns:alert"])
        let call = PushPayload.plan(for: PushUnitTests.message("callVideo"), tokens: tokens)
        #expect(
            call.map { "\($0.0.token):\($0.1.rawValue)" }
                == ["u1-fcm:voip", "u1-apns_voip:voip", "u2-hms:voip", "u2-apns:alert"])
    }
}
