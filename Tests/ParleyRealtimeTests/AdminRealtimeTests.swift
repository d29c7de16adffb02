import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// The admin API's messages on live sockets (issue 20): system messages as the seed clients decode them, and
/// online-only messages on this instance and on another one.
@Suite("Admin messages live", .serialized)
struct AdminRealtimeTests {
    @Test func systemAccountConflictNoticeArrivesLiveAsTheSeedsDecodeIt() async throws {
        try await MessagingFixture.run { fx in
            let user = try await GatewayTests.device(fx, username: "conflicted")
            let sent = try await fx.admin(
                "POST", "/api/admin/messages",
                json: [
                    "toId": user.session.userId, "chatType": "single", "msgType": "custom",
                    "content": ["type": "account_conflict", "device_model": "Pixel 9", "text": "signed in elsewhere"],
                ])
            #expect(sent.status == 201)
            let frame = try await user.socket.next("message")
            let data = try #require(frame["data"] as? [String: Any])
            #expect(data["id"] as? String == sent.string("id"))
            #expect(data["fromId"] as? String == "system")
            #expect(data["chatType"] as? String == "single")
            #expect(data["msgType"] as? String == "custom")
            // Seed 001's ImMessage: content a string; seed 000 parses it and filters on `type`.
            let content = try #require(data["content"] as? String)
            let document = try #require(
                try JSONSerialization.jsonObject(with: Data(content.utf8)) as? [String: Any])
            #expect(document["type"] as? String == "account_conflict")
            #expect(document["device_model"] as? String == "Pixel 9")
            #expect(document["text"] as? String == "signed in elsewhere")
        }
    }

    @Test func onlineOnlyReachesSocketsOnEveryInstanceAndIsNotStored() async throws {
        try await MessagingFixture.run { fx in
            let other = try await LiveApp(
                databaseURL: fx.live.app.configuration.databaseURL, masterKeyHex: fx.live.masterKeyHex)
            do {
                let here = try await GatewayTests.device(fx, username: "here")
                let thereSession = try Session(
                    try await other.client().register(appKey: fx.appKey, username: "there"))
                let there = try await IMTestClient.connect(port: other.port, token: thereSession.imToken)
                let before = try await fx.messageCount()
                for user in [here.session.userId, thereSession.userId] {
                    let sent = try await fx.admin(
                        "POST", "/api/admin/messages",
                        json: [
                            "toId": user, "chatType": "single", "msgType": "custom", "content": ["ping": user],
                            "options": ["onlineOnly": true],
                        ])
                    #expect(sent.status == 202)
                }
                let local = try #require(try await here.socket.next("message")["data"] as? [String: Any])
                #expect(local["seq"] as? Int == 0)
                #expect(local["fromId"] as? String == "system")
                let relayed = try #require(try await there.next("message")["data"] as? [String: Any])
                #expect(relayed["seq"] as? Int == 0)
                #expect(relayed["toId"] as? String == thereSession.userId)
                #expect(try await fx.messageCount() == before)
                // Not in sync either.
                let sync = try await there.request("sync")
                #expect((sync["changes"] as? [[String: Any]])?.isEmpty == true)
                await other.stop()
            } catch {
                await other.stop()
                throw error
            }
        }
    }
}
