import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyJSON
import ParleyMessageModel
import Testing

@testable import ParleyPush

@Suite("Push: payloads, APNs answers, backoff, tokens (pure)")
struct PushUnitTests {
    static func message(_ type: String = "text", content: String? = "\"hi there\"", revoked: Bool = false)
        -> PushMessage
    {
        PushMessage(
            id: 42, appId: 1, conversationId: "si:a:b", fromId: "a", chatType: "single", msgType: type,
            content: content, revoked: revoked, senderName: "Alice")
    }

    static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require((try JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any])
    }

    @Test func alertPayloadsFollowThePreviewSetting() throws {
        let full = try Self.json(PushPayload.alert(for: Self.message(), preview: .full, badge: 3))
        let aps = try #require(full["aps"] as? [String: Any])
        #expect(aps["alert"] as? [String: String] == ["title": "Alice", "body": "hi there"])
        #expect(aps["sound"] as? String == "default")
        #expect(aps["mutable-content"] as? Int == 1)
        #expect(aps["content-available"] as? Int == 1)
        #expect(aps["badge"] as? Int == 3)
        #expect(full["ext"] as? [String: String] == ["type": "chat", "conversation_id": "si:a:b", "msg_id": "42"])
        let image = try Self.json(
            PushPayload.alert(for: Self.message("image", content: #"{"objectKey":"k"}"#), preview: .full, badge: 1))
        #expect(((image["aps"] as? [String: Any])?["alert"] as? [String: String])?["body"] == "[image]")
        let sender = try Self.json(PushPayload.alert(for: Self.message(), preview: .sender, badge: 1))
        #expect(
            (sender["aps"] as? [String: Any])?["alert"] as? [String: String]
                == ["title": "Alice", "body": "Alice sent you a message"])
        let none = try Self.json(PushPayload.alert(for: Self.message(), preview: .none, badge: 1))
        #expect((none["aps"] as? [String: Any])?["alert"] as? [String: String] == ["body": "You have a new message"])
        // A long text is cut as conversation lists cut it; names and texts are JSON-escaped.
        let long = Self.message(content: JSONValue.string(String(repeating: "\"x\n", count: 200)).serializedString)
        let cut = try Self.json(PushPayload.alert(for: long, preview: .full, badge: 1))
        let body = try #require(((cut["aps"] as? [String: Any])?["alert"] as? [String: String])?["body"])
        #expect(body.count == 101 && body.hasSuffix("…"))
    }

    /// A send's `push {title, body, sound}` (seed 003: "You have a new call", `phone_ringing.mp3`) replaces the
    /// defaults whatever the preview; a VoIP push shows the title as the caller.
    @Test func sendPushOptionsReplaceTheDefaultTextAndSound() throws {
        var message = Self.message()
        message.pushBody = "You have a new call"
        message.pushSound = "phone_ringing.mp3"
        for preview in PushPreview.allCases {
            let aps = try #require(
                try Self.json(PushPayload.alert(for: message, preview: preview, badge: 1))["aps"] as? [String: Any])
            let alert = try #require(aps["alert"] as? [String: String])
            #expect(alert["body"] == "You have a new call", "\(preview)")
            #expect(alert["title"] == (preview == .none ? nil : "Alice"), "\(preview)")
            #expect(aps["sound"] as? String == "phone_ringing.mp3")
        }
        message.pushTitle = "u_alice"
        let titled = try Self.json(PushPayload.alert(for: message, preview: .none, badge: 1))
        #expect(
            (titled["aps"] as? [String: Any])?["alert"] as? [String: String]
                == ["title": "u_alice", "body": "You have a new call"])
        var call = Self.message("callAudio", content: "{}")
        call.pushTitle = "u_alice"
        for preview in PushPreview.allCases {
            let voip = try Self.json(PushPayload.voip(for: call, media: "audio", preview: preview))
            #expect(voip["voip_caller_name"] as? String == "u_alice")
        }
    }

    @Test func voipPayloadsCarryTheCallerAndTheMedia() throws {
        let call = Self.message("callAudio", content: #"{"status":"calling"}"#)
        #expect(call.callMedia == "audio")
        let voip = try Self.json(PushPayload.voip(for: call, media: "audio", preview: .full))
        #expect((voip["aps"] as? [String: Any])?.isEmpty == true)
        #expect(voip["voip_caller_name"] as? String == "Alice")
        #expect(voip["voip_caller_id"] as? String == "a")
        #expect(voip["msg_id"] as? String == "42")
        // Seed 003 reads `payloadDict["ext"] as? String`, parses it, and casts voip_ext to [String: String].
        let extText = try #require(voip["ext"] as? String)
        let ext = try Self.json(Array(extText.utf8))
        #expect(ext["type"] as? String == "call")
        #expect(ext["caller_id"] as? String == "a")
        #expect(ext["msg_id"] as? String == "42")
        #expect(ext["conversation_id"] as? String == "si:a:b")
        #expect((ext["voip_ext"] as? [String: String]) == ["voip_media_type": "audio"])
        let hidden = try Self.json(PushPayload.voip(for: call, media: "video", preview: .none, language: .zh))
        #expect(hidden["voip_caller_name"] as? String == "来电")
        #expect(hidden["voip_caller_id"] == nil)
        let hiddenExt = try Self.json(Array(try #require(hidden["ext"] as? String).utf8))
        #expect(hiddenExt["caller_id"] == nil)
        #expect((hiddenExt["voip_ext"] as? [String: String]) == ["voip_media_type": "video"])
        #expect(Self.message("callVideo").callMedia == "video")
        #expect(Self.message().callMedia == nil)
    }

    @Test func onlyCallInvitationsRing() {
        #expect(Self.message("callAudio", content: #"{"status":"calling"}"#).ringingMedia == "audio")
        #expect(Self.message("callVideo", content: "{}").ringingMedia == "video")
        #expect(Self.message("callVideo", content: #"{"status":"ringing","extra":1}"#).ringingMedia == "video")
        for record in [
            #"{"status":"missed"}"#, #"{"status":"ended","durationSec":12}"#, #"{"durationSec":0}"#,
            #"{"status":"cancelled"}"#, #"{"status":"completed"}"#, #"{"status":5}"#,
        ] {
            #expect(Self.message("callAudio", content: record).ringingMedia == nil, "\(record)")
        }
        #expect(Self.message("text").ringingMedia == nil)
        // A record goes as an alert to APNs tokens, never to VoIP ones.
        let tokens = [
            PushTarget(userId: "u", vendor: .apnsVoip, token: "v", environment: .production, bundleId: ""),
            PushTarget(userId: "u", vendor: .apns, token: "a", environment: .production, bundleId: ""),
        ]
        let plan = PushPayload.plan(for: Self.message("callAudio", content: #"{"status":"missed"}"#), tokens: tokens)
        #expect(plan.map { "\($0.0.token):\($0.1.rawValue)" } == ["a:alert"])
    }

    @Test func alertsSpeakTheRecipientsLanguage() throws {
        func body(_ message: PushMessage, _ preview: PushPreview, _ language: PreviewLanguage) throws -> String? {
            let payload = try Self.json(PushPayload.alert(for: message, preview: preview, badge: 0, language: language))
            return ((payload["aps"] as? [String: Any])?["alert"] as? [String: String])?["body"]
        }
        let image = Self.message("custom", content: #"{"type":"image","object_key":"k","width":1,"height":1}"#)
        #expect(try body(image, .full, .zh) == "[图片]")
        #expect(try body(image, .full, .en) == "[image]")
        let multi = Self.message("custom", content: #"{"type":"multi_image","object_keys":["k"]}"#)
        #expect(try body(multi, .full, .zh) == "[图片]")
        #expect(try body(multi, .full, .en) == "[images]")
        #expect(try body(Self.message("custom", content: #"{"type":"voice"}"#), .full, .zh) == "[语音]")
        #expect(try body(Self.message("custom", content: #"{"type":"signal_quote"}"#), .full, .zh) == "[消息]")
        #expect(
            try body(Self.message("custom", content: #"{"type":"signal_quote"}"#), .full, .en) == "[custom message]")
        #expect(try body(Self.message("callVideo", content: "{}"), .full, .zh) == "[视频通话]")
        #expect(try body(Self.message(), .full, .zh) == "hi there")
        #expect(try body(Self.message(), .sender, .zh) == "Alice 给你发来一条消息")
        #expect(try body(Self.message(), .none, .zh) == "你有一条新消息")
        #expect(PreviewLanguage(stored: "zh") == .zh && PreviewLanguage(stored: "fr") == .en)
        #expect(PreviewLanguage(stored: nil) == .en)
    }

    @Test func callsGoToVoIPTokensAndOtherwiseToAlertTokens() {
        func target(_ user: String, _ vendor: PushVendor) -> PushTarget {
            PushTarget(
                userId: user, vendor: vendor, token: "\(user)-\(vendor.rawValue)", environment: .production,
                bundleId: "")
        }
        let tokens = [target("u1", .apns), target("u1", .apnsVoip), target("u2", .apns)]
        let chat = PushPayload.plan(for: Self.message(), tokens: tokens)
        #expect(chat.map { $0.0.token } == ["u1-apns", "u2-apns"])
        #expect(chat.allSatisfy { $0.1 == .alert })
        let call = PushPayload.plan(for: Self.message("callVideo"), tokens: tokens)
        #expect(call.map { "\($0.0.token):\($0.1.rawValue)" } == ["u1-apns_voip:voip", "u2-apns:alert"])
    }

    @Test func apnsAnswersMapToOutcomes() {
        func body(_ reason: String) -> [UInt8] { Array(#"{"reason":"\#(reason)"}"#.utf8) }
        #expect(APNsSender.outcome(status: 200, body: []) == .delivered)
        #expect(APNsSender.outcome(status: 410, body: body("Unregistered")) == .invalidToken(reason: "Unregistered"))
        #expect(
            APNsSender.outcome(status: 400, body: body("BadDeviceToken")) == .invalidToken(reason: "BadDeviceToken"))
        #expect(
            APNsSender.outcome(status: 400, body: body("DeviceTokenNotForTopic"))
                == .invalidToken(reason: "DeviceTokenNotForTopic"))
        #expect(APNsSender.outcome(status: 400, body: body("PayloadEmpty")) == .rejected(reason: "PayloadEmpty"))
        #expect(APNsSender.outcome(status: 413, body: body("PayloadTooLarge")) == .rejected(reason: "PayloadTooLarge"))
        #expect(APNsSender.outcome(status: 429, body: body("TooManyRequests")) == .retry(reason: "TooManyRequests"))
        #expect(
            APNsSender.outcome(status: 403, body: body("ExpiredProviderToken"))
                == .retry(reason: "ExpiredProviderToken"))
        #expect(APNsSender.outcome(status: 503, body: []) == .retry(reason: "HTTP 503"))
        #expect(APNsSender.outcome(status: 500, body: Array("not json".utf8)) == .retry(reason: "HTTP 500"))
    }

    @Test func backoffDoublesUpToTheCap() {
        let configuration = PushConfiguration()
        #expect(
            (1...6).map { configuration.backoff(afterAttempts: $0) }
                == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(32)])
        #expect(configuration.backoff(afterAttempts: 9) == .seconds(256))
        #expect(configuration.backoff(afterAttempts: 10) == .seconds(300))
        #expect(configuration.backoff(afterAttempts: 1000) == .seconds(300))
    }

    @Test func tokensAreCheckedPerVendor() {
        let hex = String(repeating: "ab", count: 32)
        #expect(PushVendor.apns.normalize(hex.uppercased()) == hex)
        #expect(PushVendor.apnsVoip.normalize(String(repeating: "0", count: 200)) != nil)
        #expect(PushVendor.apns.normalize(String(repeating: "0", count: 202)) == nil)
        #expect(PushVendor.apns.normalize(String(hex.dropFirst(2))) == nil) // 62 hex digits: too short
        #expect(PushVendor.apns.normalize("g" + hex.dropFirst()) == nil)
        #expect(PushVendor.fcm.normalize("dGVzdA:APA91bH-x_y.z" + String(repeating: "q", count: 20)) != nil)
        #expect(PushVendor.fcm.normalize("with/slash" + String(repeating: "q", count: 20)) == nil)
        #expect(APNsIdentifiers.isBundleID("com.example.Chat-1"))
        #expect(!APNsIdentifiers.isBundleID("com.example."))
        #expect(!APNsIdentifiers.isBundleID("com example"))
        #expect(APNsIdentifiers.isTeamOrKeyID("ABCDE12345"))
        #expect(!APNsIdentifiers.isTeamOrKeyID("abcde12345"))
    }

    /// Pushes sent at once to a cold cache (a job's pushes go out concurrently) share one token.
    @Test func concurrentPushesToAColdCacheShareOneProviderToken() async throws {
        let tokens = APNsProviderTokens()
        let credentials = APNsCredentials(
            appId: 1, teamId: "TEAM000001", keyId: "KEY0000001", key: try P256.SigningKey.generate(),
            bundleId: "com.example", endpoint: nil)
        let issued = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 { group.addTask { try tokens.token(for: credentials) } }
            var all: Set<String> = []
            for try await token in group { all.insert(token) }
            return all
        }
        #expect(issued.count == 1)
    }

    @Test func providerTokensAreReusedForFiftyMinutesThenRenewed() throws {
        let clock = ManualClock(1_700_000_000)
        let tokens = APNsProviderTokens(now: { clock.value })
        let key = try P256.SigningKey.generate()
        let credentials = APNsCredentials(
            appId: 1, teamId: "TEAM000001", keyId: "KEY0000001", key: key,
            bundleId: "com.example", endpoint: nil)
        let first = try tokens.token(for: credentials)
        clock.value += 49 * 60
        #expect(try tokens.token(for: credentials) == first)
        clock.value += 60
        let renewed = try tokens.token(for: credentials)
        #expect(renewed != first)
        let (header, claims) = try JWT.verifyES256(renewed, key: key.verifyingKey)
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"ES256","kid":"KEY0000001"}"#)
        #expect(String(decoding: claims, as: UTF8.self) == #"{"iat":1700003000,"iss":"TEAM000001"}"#)
        // Another app has its own token; invalidation forces a new one.
        var other = credentials
        other.appId = 2
        #expect(try tokens.token(for: other) != renewed)
        clock.value += 1
        tokens.invalidate(appId: 1)
        #expect(try tokens.token(for: credentials) != renewed)
    }

    @Test func sealedKeysOpenOnlyForTheirApp() throws {
        let box = PushKeyBox(masterKey: try MasterKey(bytes: [UInt8](repeating: 7, count: 32)))
        let pem = try P256.SigningKey.generate().pem
        let sealed = try box.seal(pem: pem, appId: 5)
        #expect(box.open(sealed, appId: 5) == pem)
        #expect(box.open(sealed, appId: 6) == nil)
        let otherMaster = PushKeyBox(masterKey: try MasterKey(bytes: [UInt8](repeating: 8, count: 32)))
        #expect(otherMaster.open(sealed, appId: 5) == nil)
    }
}

final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Int
    init(_ value: Int) { current = value }
    var value: Int {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
}
