import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// Reactions, pins and deletions for oneself reach the devices that must see them, on whichever instance each is
/// connected, once, and never the device whose request caused them.
@Suite("Interaction events", .serialized)
struct InteractionEventTests {
    @Test func reactionsAndPinsReachTheOtherMemberOnAnotherInstance() async throws {
        try await MessagingFixture.run { fx in
            let other = try await LiveApp(
                databaseURL: fx.live.app.configuration.databaseURL, masterKeyHex: fx.live.masterKeyHex)
            do {
                let second = MessagingFixture(live: other, appKey: fx.appKey, appId: fx.appId)
                let alice = try await GatewayTests.device(fx, username: "alice")
                let aliceWebSession = try Session(
                    try await fx.client.login(appKey: fx.appKey, username: "alice", platform: "web"))
                let aliceWeb = try await IMTestClient.connect(port: fx.live.port, token: aliceWebSession.imToken)
                let bobSession = try Session(try await second.client.register(appKey: fx.appKey, username: "bob"))
                let bob = try await IMTestClient.connect(port: other.port, token: bobSession.imToken)

                let sent = try await fx.sendOK(alice.session, to: bobSession.userId, content: "hi")
                let id = try #require(sent["id"] as? String)
                _ = try await bob.next("message")
                let reacted = try await second.client.send(
                    "PUT", "/api/im/messages/\(id)/reactions/%F0%9F%91%8D",
                    headers: ["Authorization": "Bearer \(bobSession.accessToken)"])
                #expect(reacted.status == 200)
                for socket in [alice.socket, aliceWeb] {
                    let event = SocialEventTests.data(try await socket.next("reaction"))
                    #expect(event["msgId"] as? String == id && event["emoji"] as? String == "👍")
                    #expect(event["userId"] as? String == bobSession.userId && event["action"] as? String == "added")
                    #expect((event["reactions"] as? [[String: Any]])?.first?["count"] as? Int == 1)
                }
                // Bob's request was answered; his socket gets no echo.
                #expect(try await bob.collect("reaction", for: .milliseconds(300)).isEmpty)

                let pinned = try await fx.client.send(
                    "PUT", "/api/im/messages/\(id)/pin",
                    headers: ["Authorization": "Bearer \(alice.session.accessToken)"])
                #expect(pinned.status == 200)
                let pin = try await SocialEventTests.once(bob, "message_pinned")
                #expect(pin["msgId"] as? String == id && pin["operatorId"] as? String == alice.session.userId)
                #expect(try await SocialEventTests.once(aliceWeb, "message_pinned")["msgId"] as? String == id)

                // Deleting for oneself: only one's own other devices hear of it.
                #expect(
                    try await fx.client.delete("/api/im/messages/\(id)", token: alice.session.accessToken).status == 200
                )
                #expect(try await SocialEventTests.once(aliceWeb, "message_deleted")["msgId"] as? String == id)
                #expect(try await bob.collect("message_deleted", for: .milliseconds(300)).isEmpty)
                await other.stop()
            } catch {
                await other.stop()
                throw error
            }
        }
    }
}
