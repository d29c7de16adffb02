import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// Social-graph events (issue 19) reach every device of both users exactly once, on whichever instance each is
/// connected, except the device whose request caused them (it has the answer); a device that was away finds them
/// through sync.
@Suite("Social events", .serialized)
struct SocialEventTests {
    static func data(_ frame: [String: Any]) -> [String: Any] { frame["data"] as? [String: Any] ?? [:] }

    /// The next `type` frame, and no second one of that type soon after it (an event arrives once).
    static func once(_ socket: IMTestClient, _ type: String) async throws -> [String: Any] {
        let frame = try await socket.next(type)
        let more = try await socket.collect(type, for: .milliseconds(300))
        #expect(more.isEmpty, "\(type) arrived \(more.count + 1) times")
        return data(frame)
    }

    @Test func friendsAndBlocksReachEveryDeviceOnEveryInstance() async throws {
        try await MessagingFixture.run { fx in
            let other = try await LiveApp(
                databaseURL: fx.live.app.configuration.databaseURL, masterKeyHex: fx.live.masterKeyHex)
            do {
                let second = MessagingFixture(live: other, appKey: fx.appKey, appId: fx.appId)
                // Alice's phone on the first instance, her browser on the second; Bob the other way round.
                let alice = try await GatewayTests.device(fx, username: "alice")
                let aliceWebSession = try Session(
                    try await second.client.login(appKey: fx.appKey, username: "alice", platform: "web"))
                let aliceWeb = try await IMTestClient.connect(port: other.port, token: aliceWebSession.imToken)
                let bobSession = try Session(try await second.client.register(appKey: fx.appKey, username: "bob"))
                let bob = try await IMTestClient.connect(port: other.port, token: bobSession.imToken)
                let bobWeb = try await IMTestClient.connect(
                    port: fx.live.port,
                    token: try Session(
                        try await fx.client.login(appKey: fx.appKey, username: "bob", platform: "web")
                    ).imToken)
                let aliceWebCursor = try await fx.sync(aliceWebSession, cursor: nil).cursor

                let sent = try await fx.client.post(
                    "/api/im/friends/requests", json: ["userId": bobSession.userId, "message": "hello"],
                    token: alice.session.accessToken)
                let requestId = try #require((sent.data["request"] as? [String: Any])?["id"] as? String)
                for socket in [bob, bobWeb] {
                    let request = try await Self.once(socket, "friend_request")
                    #expect(request["id"] as? String == requestId && request["message"] as? String == "hello")
                    #expect((request["user"] as? [String: Any])?["id"] as? String == alice.session.userId)
                }
                let atAliceWeb = try await Self.once(aliceWeb, "friend_request")
                #expect((atAliceWeb["user"] as? [String: Any])?["id"] as? String == bobSession.userId)

                let accepted = try await second.client.post(
                    "/api/im/friends/requests/\(requestId)/accept", token: bobSession.accessToken)
                #expect(accepted.status == 200, "\(accepted.text)")
                for socket in [alice.socket, aliceWeb] {
                    #expect(try await Self.once(socket, "friend_added")["userId"] as? String == bobSession.userId)
                }
                #expect(try await Self.once(bobWeb, "friend_added")["userId"] as? String == alice.session.userId)

                // A block: the blocker's other devices hear of it; the blocked one only sees the friendship end.
                let blocked = try await fx.client.send(
                    "PUT", "/api/im/blocks/\(bobSession.userId)",
                    headers: ["Authorization": "Bearer \(alice.session.accessToken)"])
                #expect(blocked.status == 201, "\(blocked.text)")
                #expect(try await Self.once(aliceWeb, "block")["userId"] as? String == bobSession.userId)
                for socket in [bob, bobWeb] {
                    #expect(try await Self.once(socket, "friend_removed")["userId"] as? String == alice.session.userId)
                }
                #expect(try await bob.collect("block", for: .milliseconds(300)).isEmpty)
                #expect(try await aliceWeb.collect("friend_removed", for: .milliseconds(300)).count == 1)

                // Alice's browser was away: sync replays the same changes once, in order.
                aliceWeb.close()
                let replay = try await fx.syncUntil(aliceWebSession, from: aliceWebCursor, count: 4).changes
                #expect(
                    replay.compactMap { $0["type"] as? String } == [
                        "friend_request", "friend_added", "friend_removed", "block",
                    ])
                await other.stop()
            } catch {
                await other.stop()
                throw error
            }
        }
    }
}
