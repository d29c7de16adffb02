import ParleyJSON
import ParleyMessageModel
import Testing

@testable import ParleyPush

@Suite("Call pushes: payloads and plans (pure)")
struct CallPushUnitTests {
    static let invite = CallPush(
        action: .invite, callId: "call_x", callerId: "alice", mediaType: "audio", timeoutSeconds: 30,
        userIds: ["bob"])

    static func token(_ user: String, _ vendor: PushVendor) -> PushTarget {
        PushTarget(
            userId: user, vendor: vendor, token: "\(user)-\(vendor.rawValue)", environment: .sandbox, bundleId: "")
    }

    @Test func theNonePreviewNeitherNamesNorIdentifiesTheCaller() throws {
        let payload = try JSONValue.parse(PushPayload.call(Self.invite, callerName: "Alice", preview: .none))
        let object = try #require(payload.objectValue)
        #expect(object["voip_caller_name"]?.stringValue == "Incoming call")
        #expect(object["voip_caller_id"] == nil)
        let ext = try #require(try JSONValue.parse(Array((object["ext"]?.stringValue ?? "").utf8)).objectValue)
        #expect(ext["caller_id"] == nil)
        #expect(ext["call_id"]?.stringValue == "call_x")
    }

    @Test func theJobsJSONRoundTrips() throws {
        var cancel = Self.invite
        cancel.action = .cancel
        cancel.reason = CallPush.answeredElsewhere
        cancel.exceptSessionId = "s1"
        #expect(CallPush(json: cancel.json.serializedString) == cancel)
        #expect(CallPush(json: Self.invite.json.serializedString) == Self.invite)
        #expect(CallPush(json: "{\"action\":\"ring\"}") == nil)
    }

    @Test func plansRingVoIPAndAndroidAndAlertOnlyUsersWithoutVoIP() {
        let tokens = [
            Self.token("bob", .apns), Self.token("bob", .apnsVoip), Self.token("carol", .apns),
            Self.token("dave", .fcm), Self.token("erin", .hms),
        ]
        let ring = PushPayload.plan(for: Self.invite, tokens: tokens).map { "\($0.0.token):\($0.1.rawValue)" }
        #expect(ring == ["bob-apns_voip:voip", "carol-apns:alert", "dave-fcm:voip", "erin-hms:voip"])
        // The end of the ringing is never a VoIP push (a VoIP client shows each as a new call): a missed call is an
        // alert to every APNs alert token, VoIP user or not, and a data message on Android.
        var missed = Self.invite
        missed.action = .cancel
        missed.reason = "timeout"
        let alerted = PushPayload.plan(for: missed, tokens: tokens).map { "\($0.0.token):\($0.1.rawValue)" }
        #expect(alerted == ["bob-apns:alert", "carol-apns:alert", "dave-fcm:voip", "erin-hms:voip"])
        var answered = missed
        answered.reason = CallPush.answeredElsewhere
        let stop = PushPayload.plan(for: answered, tokens: tokens).map { "\($0.0.token):\($0.1.rawValue)" }
        #expect(stop == ["dave-fcm:voip", "erin-hms:voip"], "no missed-call alert once answered, no VoIP push ever")
    }
}
