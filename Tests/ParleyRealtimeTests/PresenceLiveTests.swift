import Foundation
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// Presence over real sockets (issue 22): statuses, subscriptions and coalesced events on one instance and across
/// two, the REST lookup, the last-seen privacy setting, and bad input.
@Suite("Presence", .serialized)
struct PresenceLiveTests {
    static let environment = ["PARLEY_PRESENCE_COALESCE_MS": "100"]

    /// The statuses of every `presence` frame until `userId` has `status` (at most 10 s).
    static func awaitStatus(_ socket: IMTestClient, _ userId: String, _ status: String) async throws
        -> [String: Any]
    {
        let frame = try await socket.next(timeout: .seconds(10)) { frame in
            guard frame["type"] as? String == "presence" else { return false }
            let users = (frame["data"] as? [String: Any])?["users"] as? [[String: Any]] ?? []
            return users.contains { $0["userId"] as? String == userId && $0["status"] as? String == status }
        }
        let users = (frame["data"] as? [String: Any])?["users"] as? [[String: Any]] ?? []
        return try #require(users.first { $0["userId"] as? String == userId })
    }

    static func users(_ ack: [String: Any]) -> [String: [String: Any]] {
        var byId: [String: [String: Any]] = [:]
        for user in ack["users"] as? [[String: Any]] ?? [] { byId[user["userId"] as? String ?? ""] = user }
        return byId
    }

    @Test func aPeerGoingOnlineAwayAndOfflineOnAnotherInstance() async throws {
        try await MessagingFixture.run(environment: Self.environment) { fx in
            let other = try await LiveApp(
                databaseURL: fx.live.app.configuration.databaseURL, masterKeyHex: fx.live.masterKeyHex,
                environment: Self.environment)
            do {
                let second = MessagingFixture(live: other, appKey: fx.appKey, appId: fx.appId)
                let alice = try await GatewayTests.device(fx, username: "alice")
                let bob = try Session(try await fx.client.register(appKey: fx.appKey, username: "bob"))
                let stranger = try Session(try await fx.client.register(appKey: fx.appKey, username: "stranger"))
                // Conversation peers may see each other; the stranger shares nothing with alice.
                try await fx.sendOK(bob, to: alice.session.userId)

                let ack = try await alice.socket.request(
                    "presence_subscribe", ["userIds": [bob.userId, stranger.userId, "nobody_here"]])
                let subscribed = Self.users(ack)
                #expect(Set(subscribed.keys) == [bob.userId], "only visible users are subscribed")
                #expect(subscribed[bob.userId]?["status"] as? String == "offline")

                // Bob connects on the other instance: online there, then away, then two sockets (one away).
                let bobPhone = try await IMTestClient.connect(port: other.port, token: bob.imToken)
                _ = try await Self.awaitStatus(alice.socket, bob.userId, "online")
                #expect(try await bobPhone.request("presence_set", ["status": "away"])["status"] as? String == "away")
                _ = try await Self.awaitStatus(alice.socket, bob.userId, "away")
                let bobWeb = try await IMTestClient.connect(port: other.port, token: bob.imToken)
                _ = try await Self.awaitStatus(alice.socket, bob.userId, "online")
                // One of two sockets closes: still online through the other (away) one, so away.
                bobWeb.close()
                _ = try await Self.awaitStatus(alice.socket, bob.userId, "away")

                // A socket on this instance too: closing the other instance's one leaves bob online here.
                let bobHere = try await IMTestClient.connect(port: fx.live.port, token: bob.imToken)
                _ = try await Self.awaitStatus(alice.socket, bob.userId, "online")
                bobPhone.close()
                #expect(try await alice.socket.collect("presence", for: .milliseconds(500)).isEmpty)
                let lookup = try await fx.client.post(
                    "/api/users/presence", json: ["userIds": [bob.userId, stranger.userId]],
                    token: alice.session.accessToken)
                #expect(lookup.status == 200, "\(lookup.text)")
                #expect(
                    try await eventually {
                        let answer = try await second.client.post(
                            "/api/users/presence", json: ["userIds": [bob.userId, stranger.userId]],
                            token: alice.session.accessToken)
                        let users = Self.users(answer.data)
                        return users.count == 1 && users[bob.userId]?["status"] as? String == "online"
                    } != nil)

                bobHere.close()
                let offline = try await Self.awaitStatus(alice.socket, bob.userId, "offline")
                let lastSeen = try #require(offline["lastSeen"] as? String)
                #expect(ISO8601DateFormatter.withFractions.date(from: lastSeen) != nil, "\(lastSeen)")

                // The REST answer agrees once the last-seen time is written; hidden, it goes, the status stays.
                #expect(
                    try await eventually {
                        let answer = try await second.client.post(
                            "/api/users/presence", json: ["userIds": [bob.userId]], token: alice.session.accessToken)
                        let user = Self.users(answer.data)[bob.userId]
                        return user?["status"] as? String == "offline" && user?["lastSeen"] is String
                    } != nil)
                let hidden = try await fx.client.patch(
                    "/api/users/me/presence", json: ["showLastSeen": false], token: bob.accessToken)
                #expect(hidden.status == 200 && hidden.data["showLastSeen"] as? Bool == false, "\(hidden.text)")
                let setting = try await fx.client.get("/api/users/me/presence", token: bob.accessToken)
                #expect(setting.data["showLastSeen"] as? Bool == false)
                let answer = try await fx.client.post(
                    "/api/users/presence", json: ["userIds": [bob.userId]], token: alice.session.accessToken)
                #expect(Self.users(answer.data)[bob.userId]?["status"] as? String == "offline")
                #expect(Self.users(answer.data)[bob.userId]?["lastSeen"] == nil)
                let bobAgain = try await IMTestClient.connect(port: other.port, token: bob.imToken)
                _ = try await Self.awaitStatus(alice.socket, bob.userId, "online")
                bobAgain.close()
                _ = try await Self.awaitStatus(alice.socket, bob.userId, "offline")
                await other.stop()
            } catch {
                await other.stop()
                throw error
            }
        }
    }

    @Test func changesWithinAWindowArriveAsOneFrameWithTheLatestStatus() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_PRESENCE_COALESCE_MS": "2000"]) { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let bob = try await GatewayTests.device(fx, username: "bob")
            try await fx.sendOK(bob.session, to: alice.session.userId)
            let ack = try await alice.socket.request("presence_subscribe", ["userIds": [bob.session.userId]])
            #expect(Self.users(ack)[bob.session.userId]?["status"] as? String == "online")
            // The first change goes out at once; the next ones wait for the window and come as one, the latest.
            try await bob.socket.request("presence_set", ["status": "away"])
            _ = try await Self.awaitStatus(alice.socket, bob.session.userId, "away")
            try await bob.socket.request("presence_set", ["status": "online"])
            try await bob.socket.request("presence_set", ["status": "away"])
            try await bob.socket.request("presence_set", ["status": "online"])
            _ = try await Self.awaitStatus(alice.socket, bob.session.userId, "online")
            #expect(try await alice.socket.collect("presence", for: .milliseconds(300)).isEmpty)
            // Unsubscribed: nothing more.
            try await alice.socket.request("presence_unsubscribe", ["userIds": [bob.session.userId]])
            try await bob.socket.request("presence_set", ["status": "away"])
            #expect(try await alice.socket.collect("presence", for: .milliseconds(2500)).isEmpty)
        }
    }

    @Test func badInputIsRefusedWithItsCode() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_PRESENCE_MAX_SUBSCRIPTIONS": "2"]) { fx in
            let alice = try await GatewayTests.device(fx, username: "alice")
            let peers = try await fx.users(3, prefix: "peer")
            for peer in peers { try await fx.sendOK(peer, to: alice.session.userId) }
            for (data, code) in [
                (["status": "busy"], 1511), (["status": 3], 1002), ([:], 1002),
            ] as [([String: Any], Int)] {
                do {
                    try await alice.socket.request("presence_set", data)
                    Issue.record("accepted \(data)")
                } catch let error as IMTestError {
                    #expect(error.code == code, "\(data): \(error)")
                }
            }
            for data in [
                [:], ["userIds": []], ["userIds": "x"], ["userIds": ["bad id"]],
                ["userIds": (0...1000).map { "u\($0)" }],
            ] as [[String: Any]] {
                do {
                    try await alice.socket.request("presence_subscribe", data)
                    Issue.record("accepted \(data)")
                } catch let error as IMTestError {
                    #expect(error.code == 1002)
                }
            }
            try await alice.socket.request("presence_subscribe", ["userIds": [peers[0].userId, peers[1].userId]])
            do {
                try await alice.socket.request("presence_subscribe", ["userIds": [peers[2].userId]])
                Issue.record("past the limit")
            } catch let error as IMTestError {
                #expect(error.code == 1510)
            }
            // The connection still works.
            try await alice.socket.request("presence_unsubscribe", ["userIds": [peers[0].userId]])
            try await alice.socket.request("presence_subscribe", ["userIds": [peers[2].userId]])

            for body in [["userIds": []], ["userIds": Array(repeating: "u", count: 101)], ["nope": 1]]
                as [[String: Any]]
            {
                let response = try await fx.client.post(
                    "/api/users/presence", json: body, token: alice.session.accessToken)
                #expect(response.status == 400 && response.code == 1002, "\(response.text)")
            }
            let patched = try await fx.client.patch(
                "/api/users/me/presence", json: ["showLastSeen": "no"], token: alice.session.accessToken)
            #expect(patched.status == 400 && patched.code == 1002, "\(patched.text)")
            let anonymous = try await fx.client.post("/api/users/presence", json: ["userIds": ["a"]])
            #expect(anonymous.status == 401)
        }
    }
}

extension ISO8601DateFormatter {
    static var withFractions: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
