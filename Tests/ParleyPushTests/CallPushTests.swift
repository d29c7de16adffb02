import Foundation
import ParleyLiveSupport
import ParleyPush
import ParleyTestSupport
import Testing

/// Signalling's calls (`/api/calls`) ring offline callees through VoIP pushes in seed 003's payload (migrations/0029);
/// the end of the ringing is never a VoIP push (seed 003's client would show it as a new call), only a "Missed call"
/// alert.
@Suite("Call pushes through a mock APNs", .serialized, .enabled(if: MockAPNs.python != nil, "\(MockAPNs.unavailable)"))
struct CallPushTests {
    static func invite(
        _ fixture: PushFixture, _ caller: Session, _ callees: [Session], body: [String: Any] = [:]
    ) async throws -> String {
        var json: [String: Any] = ["participantIds": callees.map(\.userId), "mediaType": "audio"]
        json.merge(body) { _, new in new }
        let response = try await fixture.client.post("/api/calls", json: json, token: caller.accessToken)
        guard response.status == 201, let callId = response.data["callId"] as? String else {
            throw TestFailure("invite failed: \(response.status) \(response.text)")
        }
        return callId
    }

    static func act(_ fixture: PushFixture, _ action: String, _ callId: String, as session: Session) async throws {
        let response = try await fixture.client.post("/api/calls/\(callId)/\(action)", token: session.accessToken)
        guard response.status == 200 else { throw TestFailure("\(action) failed: \(response.status) \(response.text)") }
    }

    @Test func anOfflineCalleeRingsThroughVoIPAndTheCallersCancelIsAMissedCallAlertNotAVoIPPush() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(2)
            let (alice, bob) = (users[0], users[1])
            let voipToken = PushFixture.token()
            let alertToken = PushFixture.token()
            try await fixture.bind(bob, token: voipToken, vendor: "apns_voip")
            try await fixture.bind(bob, token: alertToken)
            let callId = try await Self.invite(
                fixture, alice, [bob], body: ["mediaType": "video", "timeoutSeconds": 45, "userData": "room-7"])
            try await fixture.drained()
            let rings = fixture.mock.requests(token: voipToken)
            #expect(rings.count == 1)
            let ring = try #require(rings.first)
            #expect(ring.status == 200, "\(ring.reason ?? "")")
            #expect(ring.pushType == "voip")
            #expect(ring.topic == PushFixture.bundleId + ".voip")
            #expect(ring.aps.isEmpty)
            #expect(ring.headers["apns-collapse-id"] == callId)
            // Seed 003: the caller's nickname (or id), and `ext` a JSON string holding voip_ext.voip_media_type.
            #expect(ring.payload["voip_caller_name"] as? String == "user0")
            #expect(ring.payload["voip_caller_id"] as? String == alice.userId)
            #expect(ring.extString != nil, "ext must be a JSON string")
            #expect(ring.voipExt["voip_ext"] as? [String: String] == ["voip_media_type": "video"])
            #expect(ring.voipExt["type"] as? String == "call")
            #expect(ring.voipExt["action"] as? String == "invite")
            #expect(ring.voipExt["call_id"] as? String == callId)
            #expect(ring.voipExt["caller_id"] as? String == alice.userId)
            #expect(ring.voipExt["media_type"] as? String == "video")
            #expect(ring.voipExt["timeout_seconds"] as? Int == 45)
            #expect(fixture.mock.requests(token: alertToken).isEmpty, "a user with a VoIP token gets no call alert")

            try await Self.act(fixture, "cancel", callId, as: alice)
            try await fixture.drained()
            // Seed 003's client shows every VoIP push as an incoming call: a cancel sent as one would ring again.
            #expect(fixture.mock.requests(token: voipToken).count == 1, "the cancel is no VoIP push")
            // The alert token gets the missed call (and the call's record, callVideo cancelled, neither rings nor
            // alerts).
            let alerts = fixture.mock.requests(token: alertToken)
            #expect(alerts.count == 1)
            let missed = try #require(alerts.first)
            #expect(missed.status == 200, "\(missed.reason ?? "")")
            #expect(missed.pushType == "alert")
            #expect(missed.alert["body"] as? String == "Missed call")
            #expect(missed.headers["apns-collapse-id"] == callId)
            #expect(missed.ext["action"] as? String == "cancel")
            #expect(missed.ext["call_id"] as? String == callId)
            // Both attempts are in the troubleshooting log, about no message.
            let logged = try await fixture.database.query(
                """
                SELECT kind, count(*) AS n FROM push_attempts
                WHERE app_id = \(fixture.appId) AND user_id = \(bob.userId) AND message_id IS NULL
                GROUP BY kind ORDER BY kind
                """
            ).map { "\(try $0.decode("kind", as: String.self)):\(try $0.decode("n", as: Int.self))" }
            #expect(logged == ["alert:1", "voip:1"])
        }
    }

    @Test func anOnlineCalleeGetsNoCallPush() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(2)
            let (alice, bob) = (users[0], users[1])
            let voipToken = PushFixture.token()
            try await fixture.bind(bob, token: voipToken, vendor: "apns_voip")
            let socket = try await OnlineDevice.connect(port: fixture.live.port, imToken: bob.imToken)
            #expect(try await eventually { try await fixture.presenceCount(bob.userId) == 1 } != nil)
            let callId = try await Self.invite(fixture, alice, [bob])
            try await fixture.drained()
            try await Self.act(fixture, "cancel", callId, as: alice)
            try await fixture.drained()
            #expect(fixture.mock.requests(token: voipToken).isEmpty, "an online callee rings on the socket only")
            await socket.close()
        }
    }

    @Test func answeringOnOneDeviceSendsTheOtherDevicesNoVoIPPush() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(2)
            let (alice, bobPhone) = (users[0], users[1])
            let bobTablet = try Session(
                try await fixture.client.login(appKey: fixture.messaging.appKey, username: "user1", platform: "android")
            )
            let phoneToken = PushFixture.token()
            let tabletToken = PushFixture.token()
            try await fixture.bind(bobPhone, token: phoneToken, vendor: "apns_voip")
            try await fixture.bind(bobTablet, token: tabletToken, vendor: "apns_voip")
            let callId = try await Self.invite(fixture, alice, [bobPhone])
            try await fixture.drained()
            #expect(fixture.mock.requests(token: phoneToken).count == 1)
            #expect(fixture.mock.requests(token: tabletToken).count == 1)

            // The phone, woken by the invite, learns the answer from `GET /api/calls`: a VoIP push would ring it again.
            try await Self.act(fixture, "accept", callId, as: bobTablet)
            try await fixture.drained()
            #expect(fixture.mock.requests(token: phoneToken).count == 1, "no VoIP push for answered elsewhere")
            #expect(fixture.mock.requests(token: tabletToken).count == 1, "the answering device is not told")
            let calls = try await fixture.client.get("/api/calls", token: bobPhone.accessToken)
            let listed = (calls.data["calls"] as? [[String: Any]])?.first { $0["callId"] as? String == callId }
            #expect(listed?["state"] as? String == "active", "the phone reads that the call was answered")

            try await Self.act(fixture, "hangup", callId, as: alice)
            try await fixture.drained()
            #expect(fixture.mock.requests(token: phoneToken).count == 1, "an answered call's end pushes nothing")
        }
    }

    @Test func aCalleeWithoutAVoIPTokenGetsAlertsAndAMissedCall() async throws {
        try await PushFixture.run { fixture in
            let users = try await fixture.messaging.users(2)
            let (alice, bob) = (users[0], users[1])
            let alertToken = PushFixture.token()
            try await fixture.bind(bob, token: alertToken)
            let callId = try await Self.invite(fixture, alice, [bob])
            try await fixture.drained()
            try await Self.act(fixture, "cancel", callId, as: alice)
            try await fixture.drained()
            let alerts = fixture.mock.requests(token: alertToken)
            #expect(alerts.map(\.pushType) == ["alert", "alert"])
            #expect(alerts.map { $0.alert["body"] as? String } == ["Incoming audio call", "Missed call"])
            #expect(alerts.allSatisfy { $0.headers["apns-collapse-id"] == callId }, "the missed call replaces the ring")
            #expect(alerts.last?.ext["call_id"] as? String == callId)
        }
    }
}
