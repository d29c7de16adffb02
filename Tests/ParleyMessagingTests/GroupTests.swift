import Foundation
import ParleyLiveSupport
import Testing

/// Groups: members, roles, leave, transfer, dissolve, limits; who may read and post.
@Suite("Groups", .serialized)
struct GroupTests {
    func notifyEvents(_ fx: MessagingFixture, _ session: Session, _ conversationId: String) async throws -> [String] {
        let response = try await fx.history(session, conversationId, query: "?limit=100")
        return (response.data["messages"] as? [[String: Any]] ?? []).compactMap { message in
            guard message["msgType"] as? String == "notify" else { return nil }
            return MessagingFixture.contentObject(message)?["event"] as? String
        }
    }

    @Test func membershipChangesAreNotifyMessages() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(5)
            let (owner, a, b, c, d) = (users[0], users[1], users[2], users[3], users[4])
            let group = try await fx.createGroup(owner, name: "Crew", members: [a, b])
            let info = try await fx.client.get("/api/im/groups/\(group.groupId)", token: a.accessToken)
            #expect(info.data["memberCount"] as? Int == 3)
            #expect(info.data["ownerId"] as? String == owner.userId)
            #expect(info.data["name"] as? String == "Crew")
            #expect(group.conversationId == "sg:\(group.groupId)")

            try await fx.sendOK(a, to: group.groupId, chatType: "group", content: "before c")
            // Members add: only owners and admins.
            #expect(
                try await fx.client.post(
                    "/api/im/groups/\(group.groupId)/members", json: ["userIds": [c.userId]],
                    token: a.accessToken
                ).code == 1112)
            let added = try await fx.client.post(
                "/api/im/groups/\(group.groupId)/members", json: ["userIds": [c.userId]],
                token: owner.accessToken)
            #expect(added.status == 200)
            #expect(added.data["memberCount"] as? Int == 4)
            // A new member sees history from the join on: the member_added notice, not what came before.
            let cHistory = try await fx.history(c, group.conversationId)
            let cMessages = cHistory.data["messages"] as? [[String: Any]] ?? []
            #expect(cMessages.count == 1)
            #expect(MessagingFixture.contentObject(cMessages.first)?["event"] as? String == "member_added")
            #expect(try await fx.conversation(c, group.conversationId)?["showName"] as? String == "Crew")

            // Roles: the owner makes a an admin; an admin removes a plain member, but not another admin.
            #expect(
                try await fx.client.patch(
                    "/api/im/groups/\(group.groupId)/members/\(a.userId)", json: ["role": "admin"],
                    token: owner.accessToken
                ).status == 200)
            #expect(
                try await fx.client.patch(
                    "/api/im/groups/\(group.groupId)/members/\(b.userId)", json: ["role": "admin"],
                    token: a.accessToken
                ).code == 1112)
            #expect(
                try await fx.client.delete(
                    "/api/im/groups/\(group.groupId)/members/\(c.userId)",
                    token: a.accessToken
                ).status == 200)
            #expect(
                try await fx.client.delete(
                    "/api/im/groups/\(group.groupId)/members/\(owner.userId)",
                    token: a.accessToken
                ).code == 1112)
            // Removing yourself is leaving, which has its own route: 403 with 1117, for owners and admins alike.
            for member in [a, owner] {
                let removal = try await fx.client.delete(
                    "/api/im/groups/\(group.groupId)/members/\(member.userId)",
                    token: member.accessToken)
                #expect(removal.status == 403)
                #expect(removal.code == 1117)
            }
            // The removed member can neither read (the conversation is not theirs: 1101) nor post any more.
            #expect(try await fx.history(c, group.conversationId).code == 1101)
            #expect(try await fx.send(c, to: group.groupId, chatType: "group").code == 1100)
            #expect(try await fx.conversation(c, group.conversationId) == nil)

            // Blocked members cannot post; unblocked they can.
            #expect(
                try await fx.client.patch(
                    "/api/im/groups/\(group.groupId)/members/\(b.userId)", json: ["blocked": true],
                    token: a.accessToken
                ).status == 200)
            #expect(try await fx.send(b, to: group.groupId, chatType: "group").code == 1109)
            #expect(
                try await fx.client.patch(
                    "/api/im/groups/\(group.groupId)/members/\(b.userId)", json: ["blocked": false],
                    token: owner.accessToken
                ).status == 200)
            #expect(try await fx.send(b, to: group.groupId, chatType: "group").status == 201)

            // Leave; the owner must transfer first.
            #expect(
                try await fx.client.post("/api/im/groups/\(group.groupId)/leave", token: owner.accessToken).code == 1113
            )
            #expect(
                try await fx.client.post("/api/im/groups/\(group.groupId)/leave", token: b.accessToken).status == 200)
            #expect(try await fx.send(b, to: group.groupId, chatType: "group").code == 1100)
            let transferred = try await fx.client.post(
                "/api/im/groups/\(group.groupId)/transfer", json: ["userId": a.userId],
                token: owner.accessToken)
            #expect(transferred.data["ownerId"] as? String == a.userId)
            let members = try await fx.client.get("/api/im/groups/\(group.groupId)/members", token: owner.accessToken)
            let roles = Dictionary(
                uniqueKeysWithValues: (members.data["members"] as? [[String: Any]] ?? []).map {
                    ($0["userId"] as! String, $0["role"] as! String)
                })
            #expect(roles == [a.userId: "owner", owner.userId: "admin"])

            // Dissolve: only the owner; afterwards nobody posts, history stays.
            #expect(
                try await fx.client.delete("/api/im/groups/\(group.groupId)", token: owner.accessToken).code == 1112)
            #expect(try await fx.client.delete("/api/im/groups/\(group.groupId)", token: a.accessToken).status == 200)
            #expect(try await fx.send(a, to: group.groupId, chatType: "group").code == 1110)
            #expect(
                try await notifyEvents(fx, a, group.conversationId) == [
                    "group_created", "member_added", "role_changed", "member_removed", "member_blocked",
                    "member_unblocked",
                    "member_left", "owner_transferred", "group_dissolved",
                ])
            // A stranger sees nothing of it.
            #expect(try await fx.client.get("/api/im/groups/\(group.groupId)", token: d.accessToken).code == 1100)
            #expect(try await fx.history(d, group.conversationId).code == 1101)
        }
    }

    @Test func nonMembersCannotReadOrPost() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let group = try await fx.createGroup(users[0], members: [users[1]])
            try await fx.sendOK(users[1], to: group.groupId, chatType: "group", content: "members only")
            let before = try await fx.messageCount()
            let post = try await fx.send(users[2], to: group.groupId, chatType: "group")
            #expect(post.status == 403)
            #expect(post.code == 1100)
            // Conversation routes answer as for a conversation that does not exist.
            #expect(try await fx.history(users[2], group.conversationId).status == 404)
            #expect(
                try await fx.client.post(
                    "/api/im/conversations/\(group.conversationId)/read", json: ["seq": 1],
                    token: users[2].accessToken
                ).status == 404)
            let synced = try await fx.syncAll(users[2], from: "0-0").changes
            #expect(synced.isEmpty)
            // Unknown group: 403 as well for posting (no conversation to be a member of), 404 for reading.
            #expect(try await fx.send(users[2], to: "g_unknown", chatType: "group").code == 1100)
            #expect(try await fx.history(users[2], "sg:g_unknown").code == 1101)
            #expect(try await fx.messageCount() == before)
            // A 1:1 conversation of two other users.
            try await fx.sendOK(users[0], to: users[1].userId)
            #expect(try await fx.history(users[2], MessagingFixture.singleID(users[0], users[1])).code == 1101)
        }
    }

    @Test func memberLimitIsEnforced() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_IM_GROUP_MEMBER_LIMIT": "3"]) { fx in
            let users = try await fx.users(5)
            let tooMany = try await fx.client.post(
                "/api/im/groups", json: ["name": "Big", "memberIds": users[1...].map(\.userId)],
                token: users[0].accessToken)
            #expect(tooMany.code == 1111)
            let group = try await fx.createGroup(users[0], members: [users[1], users[2]])
            let more = try await fx.client.post(
                "/api/im/groups/\(group.groupId)/members", json: ["userIds": [users[3].userId]],
                token: users[0].accessToken)
            #expect(more.status == 409)
            #expect(more.code == 1111)
            #expect(
                try await fx.client.get("/api/im/groups/\(group.groupId)", token: users[0].accessToken)
                    .data["memberCount"] as? Int == 3)
            // Unknown users are refused, nothing created.
            let unknown = try await fx.client.post(
                "/api/im/groups", json: ["name": "X", "memberIds": ["ghost"]],
                token: users[0].accessToken)
            #expect(unknown.code == 1103)
        }
    }
}
