import Foundation
import ParleyLiveSupport
import Testing

/// Nothing of one app's conversations is reachable from another app, whatever ids are guessed.
@Suite("Messaging tenant isolation")
struct MessagingTenantIsolationTests {
    @Test func otherAppsSeeNothing() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let message = try await fx.sendOK(alice, to: bob.userId, content: "for bob only")
            let group = try await fx.createGroup(alice, members: [bob])
            try await fx.sendOK(bob, to: group.groupId, chatType: "group", content: "group secret")

            let (other, _) = try await fx.live.createApp(name: "Other")
            // Same usernames in the other app, different users; ids of app A are unknown there.
            let mallory = try Session(try await fx.client.register(appKey: other.appKey, username: "user0"))
            let dm = MessagingFixture.singleID(alice, bob)
            #expect(try await fx.send(mallory, to: bob.userId).code == 1103)
            #expect(try await fx.send(mallory, to: group.groupId, chatType: "group").code == 1100)
            #expect(try await fx.history(mallory, dm).code == 1101)
            #expect(try await fx.history(mallory, group.conversationId).code == 1101)
            #expect(
                try await fx.client.post(
                    "/api/im/messages/\(message["id"] as! String)/revoke",
                    token: mallory.accessToken
                ).code == 1102)
            #expect(
                try await fx.client.patch(
                    "/api/im/messages/\(message["id"] as! String)", json: ["content": "x"],
                    token: mallory.accessToken
                ).code == 1102)
            #expect(try await fx.client.get("/api/im/groups/\(group.groupId)", token: mallory.accessToken).code == 1104)
            #expect(
                try await fx.client.post(
                    "/api/im/groups/\(group.groupId)/members", json: ["userIds": [mallory.userId]],
                    token: mallory.accessToken
                ).code == 1104)
            #expect(try await fx.conversations(mallory).isEmpty)
            #expect(try await fx.syncAll(mallory, from: "0-0").changes.isEmpty)
            // Alice's content is intact.
            #expect(try await fx.historySeqs(bob, dm) == [1])
        }
    }
}
