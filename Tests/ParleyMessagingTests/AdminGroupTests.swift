import Foundation
import ParleyLiveSupport
import ParleyPostgres
import Testing

/// The admin API's groups (issue 20): the user routes' operations acting as the app, and mutes.
@Suite("Admin groups", .serialized)
struct AdminGroupTests {
    func notifyEvents(_ fx: MessagingFixture, _ session: Session, _ conversationId: String) async throws -> [String] {
        let response = try await fx.history(session, conversationId, query: "?limit=100")
        return (response.data["messages"] as? [[String: Any]] ?? []).compactMap { message in
            guard message["msgType"] as? String == "notify" else { return nil }
            return MessagingFixture.contentObject(message)?["event"] as? String
        }
    }

    @Test func theAppManagesAGroupWithoutBeingAMember() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let (owner, a, b, c) = (users[0], users[1], users[2], users[3])
            let created = try await fx.admin(
                "POST", "/api/admin/groups",
                json: ["ownerId": owner.userId, "name": "Ops", "members": [a.userId], "groupId": "ops-room"])
            #expect(created.status == 201)
            #expect(created.string("groupId") == "ops-room")
            #expect(created.string("ownerId") == owner.userId)
            #expect(created.data["memberCount"] as? Int == 2)
            let conversationId = "sg:ops-room"
            let taken = try await fx.admin(
                "POST", "/api/admin/groups", json: ["ownerId": owner.userId, "name": "Again", "groupId": "ops-room"])
            #expect(taken.status == 409 && taken.code == 1129)
            #expect(
                try await fx.admin("POST", "/api/admin/groups", json: ["ownerId": "ghost", "name": "X"]).code == 1103)

            let added = try await fx.admin(
                "POST", "/api/admin/groups/ops-room/members", json: ["userIds": [b.userId, c.userId]])
            #expect(added.data["memberCount"] as? Int == 4)
            let removed = try await fx.admin(
                "POST", "/api/admin/groups/ops-room/members/remove", json: ["userIds": [c.userId]])
            #expect(removed.data["memberCount"] as? Int == 3)
            #expect(
                try await fx.admin(
                    "POST", "/api/admin/groups/ops-room/members/remove", json: ["userIds": [owner.userId]]
                ).code == 1112)
            let renamed = try await fx.admin("PATCH", "/api/admin/groups/ops-room", json: ["name": "Ops 2"])
            #expect(renamed.string("name") == "Ops 2")
            let transferred = try await fx.admin(
                "POST", "/api/admin/groups/ops-room/transfer", json: ["ownerId": a.userId])
            #expect(transferred.string("ownerId") == a.userId)
            #expect(try await fx.admin("POST", "/api/admin/groups/ops-room/dissolve").status == 200)
            #expect(try await fx.admin("GET", "/api/admin/groups/ops-room").data["dissolved"] as? Bool == true)
            #expect(
                try await notifyEvents(fx, a, conversationId) == [
                    "group_created", "member_added", "member_removed", "group_updated", "owner_transferred",
                    "group_dissolved",
                ])
            let history = try await fx.history(a, conversationId, query: "?limit=100")
            let operators = (history.data["messages"] as? [[String: Any]] ?? []).dropFirst().compactMap {
                MessagingFixture.contentObject($0)?["operatorId"] as? String
            }
            #expect(operators.allSatisfy { $0 == "system" })
            #expect(
                try await fx.admin("POST", "/api/admin/groups/nope/members", json: ["userIds": [a.userId]]).code == 1104
            )
        }
    }

    @Test func aTimedMuteRefusesUntilItEnds() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (owner, member) = (users[0], users[1])
            let group = try await fx.createGroup(owner, members: [member])
            let future = Int64((Date().timeIntervalSince1970 + 3600) * 1000)
            let muted = try await fx.admin(
                "POST", "/api/admin/groups/\(group.groupId)/members/\(member.userId)/mute", json: ["until": future])
            #expect(muted.status == 200)
            let refused = try await fx.send(member, to: group.groupId, chatType: "group", content: "hello")
            #expect(refused.status == 403 && refused.code == 1130)
            #expect(refused.json["message"] as? String ?? "" != "")
            // The owner is not muted.
            #expect(try await fx.send(owner, to: group.groupId, chatType: "group", content: "hi").status == 201)
            // A mute whose time has passed no longer refuses (set in the past: no waiting).
            let past = Int64((Date().timeIntervalSince1970 - 1) * 1000)
            _ = try await fx.admin(
                "POST", "/api/admin/groups/\(group.groupId)/members/\(member.userId)/mute", json: ["until": past])
            #expect(try await fx.send(member, to: group.groupId, chatType: "group", content: "back").status == 201)
            // Muted again, then unmuted (no `until`).
            _ = try await fx.admin(
                "POST", "/api/admin/groups/\(group.groupId)/members/\(member.userId)/mute", json: ["until": future])
            #expect(try await fx.send(member, to: group.groupId, chatType: "group", content: "x").code == 1130)
            _ = try await fx.admin("POST", "/api/admin/groups/\(group.groupId)/members/\(member.userId)/mute")
            #expect(try await fx.send(member, to: group.groupId, chatType: "group", content: "y").status == 201)
            #expect(
                try await notifyEvents(fx, member, group.conversationId).suffix(4) == [
                    "member_muted", "member_muted", "member_muted", "member_unmuted",
                ])
            #expect(
                try await fx.admin(
                    "POST", "/api/admin/groups/\(group.groupId)/members/\(owner.userId)/mute", json: ["until": future]
                ).code == 1112)
        }
    }

    @Test func muteAllLetsOnlyOwnerAndAdminsSpeak() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (owner, admin, member) = (users[0], users[1], users[2])
            let group = try await fx.createGroup(owner, members: [admin, member])
            #expect(
                try await fx.client.patch(
                    "/api/im/groups/\(group.groupId)/members/\(admin.userId)", json: ["role": "admin"],
                    token: owner.accessToken
                ).status == 200)
            let muted = try await fx.admin("POST", "/api/admin/groups/\(group.groupId)/mute-all", json: ["muted": true])
            #expect(muted.data["mutedAll"] as? Bool == true)
            #expect(try await fx.send(member, to: group.groupId, chatType: "group", content: "m").code == 1131)
            #expect(try await fx.send(owner, to: group.groupId, chatType: "group", content: "o").status == 201)
            #expect(try await fx.send(admin, to: group.groupId, chatType: "group", content: "a").status == 201)
            // The user route: an admin lifts it.
            let lifted = try await fx.client.post(
                "/api/im/groups/\(group.groupId)/mute-all", json: ["muted": false], token: admin.accessToken)
            #expect(lifted.status == 200 && lifted.data["mutedAll"] as? Bool == false)
            #expect(try await fx.send(member, to: group.groupId, chatType: "group", content: "m2").status == 201)
            // A plain member may not mute.
            #expect(
                try await fx.client.post(
                    "/api/im/groups/\(group.groupId)/mute-all", json: ["muted": true], token: member.accessToken
                ).code == 1112)
            let events = try await notifyEvents(fx, member, group.conversationId)
            #expect(events.contains("group_muted") && events.contains("group_unmuted"))
        }
    }
}
