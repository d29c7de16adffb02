import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// Issue 19's `profile` event: a change of what others see of a user (nickname, avatar, signature, ex) reaches their
/// active friends, their 1:1 peers and their own other devices, live and through sync, once; nobody else, and not
/// for a change only the user sees (`searchable`) or one that changes nothing.
@Suite("Profile events", .serialized)
struct ProfileEventTests {
    typealias Device = GatewayTests.Device

    static func data(_ frame: [String: Any]) -> [String: Any] { frame["data"] as? [String: Any] ?? [:] }

    /// The smallest PNG (1x1): an avatar must be a raster image.
    static let png: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
        0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
        0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ]

    static func friends(_ fx: MessagingFixture, _ a: Device, _ b: Device, active: Bool = true) async throws {
        let (x, y) = (a.session.userId, b.session.userId)
        _ = try await fx.database.query(
            """
            INSERT INTO friendships (app_id, user_id, friend_id, active)
            VALUES (\(fx.appId), \(x), \(y), \(active)), (\(fx.appId), \(y), \(x), \(active))
            """)
    }

    @Test func aProfileChangeReachesFriendsPeersAndOwnDevicesOnce() async throws {
        try await MessagingFixture.run { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let aliceWeb = try await GatewayTests.device(fx, username: "alice", platform: "web", register: false)
            let friend = try await GatewayTests.device(fx, username: "friend")
            let peer = try await GatewayTests.device(fx, username: "peer")
            let former = try await GatewayTests.device(fx, username: "former")
            let stranger = try await GatewayTests.device(fx, username: "stranger")
            try await Self.friends(fx, alice, friend)
            // A removed friendship (a tombstone) is no audience.
            try await Self.friends(fx, alice, former, active: false)
            // The peer of a 1:1 conversation, whoever wrote first; a shared group makes nobody an audience.
            try await fx.sendOK(peer.session, to: alice.session.userId, content: "hi")
            // A friend who is a 1:1 peer too still gets each event once.
            try await fx.sendOK(alice.session, to: friend.session.userId, content: "hello friend")
            _ = try await fx.createGroup(alice.session, members: [stranger.session])

            var cursors: [String: String] = [:]
            for device in [alice, friend, peer, former, stranger] {
                cursors[device.session.userId] = try await fx.sync(device.session, cursor: nil).cursor
            }

            // One change of nickname, signature and ex: one event with the whole public profile.
            let changed = try await fx.client.patch(
                "/api/users/me", json: ["nickname": "Alice C", "signature": "on holiday", "ex": ["level": 3]],
                token: alice.session.accessToken)
            #expect(changed.status == 200, "\(changed.text)")
            for device in [friend, peer, aliceWeb] {
                let profile = Self.data(try await device.socket.next("profile"))
                #expect(Set(profile.keys) == ["id", "nickname", "avatar", "signature", "ex", "deleted"])
                #expect(profile["id"] as? String == alice.session.userId)
                #expect(profile["nickname"] as? String == "Alice C" && profile["signature"] as? String == "on holiday")
                #expect((profile["ex"] as? [String: Any])?["level"] as? Int == 3 && profile["avatar"] is NSNull)
            }

            // Not for a change only Alice sees, nor for one that changes nothing.
            for body: [String: Any] in [["searchable": false], ["nickname": "Alice C", "signature": "on holiday"]] {
                let unchanged = try await fx.client.patch("/api/users/me", json: body, token: alice.session.accessToken)
                #expect(unchanged.status == 200, "\(unchanged.text)")
            }
            // A new avatar is a change: the next event each gets is this one (frames keep their order, so an extra
            // event for the changes above would come first).
            let key = try await fx.uploadKey(alice.session, bytes: Self.png)
            let avatar = try await fx.client.patch(
                "/api/users/me", json: ["avatar": key], token: alice.session.accessToken)
            let record = try #require(avatar.string("avatar"), "\(avatar.text)")
            for device in [friend, peer, aliceWeb] {
                let profile = Self.data(try await device.socket.next("profile"))
                #expect(profile["avatar"] as? String == record && profile["nickname"] as? String == "Alice C")
            }

            // Frames keep their order: an event for the stranger would come before this message, and one for
            // Alice's own device or the former friend before the answer to their ping.
            try await fx.sendOK(friend.session, to: stranger.session.userId, content: "after")
            _ = try await stranger.socket.next("message") { Self.data($0)["content"] as? String == "after" }
            for device in [alice, former] { _ = try await device.socket.request("ping") }
            for device in [stranger, former, alice] {
                await #expect(throws: (any Error).self) { try await device.socket.next("profile", timeout: .zero) }
            }

            // Sync: exactly the two events, in order, for Alice (her own devices) and her audience.
            for device in [alice, friend, peer] {
                let changes = try await fx.syncUntil(device.session, from: cursors[device.session.userId]!) {
                    $0.filter { $0["type"] as? String == "profile" }.count >= 2
                }.changes.filter { $0["type"] as? String == "profile" }
                #expect(changes.map { $0["nickname"] as? String } == ["Alice C", "Alice C"])
                #expect(changes.map { $0["avatar"] as? String } == [nil, record])
                #expect(changes.first?["signature"] as? String == "on holiday")
                #expect((changes.first?["ex"] as? [String: Any])?["level"] as? Int == 3)
                #expect(changes.allSatisfy { $0["id"] as? String == alice.session.userId })
            }
            // None for the others: the stranger's message is later than every event, so once sync has it, it has
            // everything that came before.
            let strangers = try await fx.syncUntil(stranger.session, from: cursors[stranger.session.userId]!) {
                $0.contains { ($0["message"] as? [String: Any])?["content"] as? String == "after" }
            }.changes
            #expect(strangers.contains { ($0["message"] as? [String: Any])?["content"] as? String == "after" })
            #expect(!strangers.contains { $0["type"] as? String == "profile" })
            let formers = try await fx.syncAll(former.session, from: cursors[former.session.userId]!).changes
            #expect(!formers.contains { $0["type"] as? String == "profile" })
        }
    }
}
