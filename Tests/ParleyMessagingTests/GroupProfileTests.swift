import Foundation
import ParleyLiveSupport
import Testing

/// Groups that communities run (issue 22): my groups, the group's profile (announcement, introduction, `ex`).
@Suite("Group profiles", .serialized)
struct GroupProfileTests {
    func groupIds(_ response: TestResponse) -> [String] {
        (response.data["groups"] as? [[String: Any]] ?? []).compactMap { $0["groupId"] as? String }
    }

    @Test func myGroupsPageInIdOrderAndKeepDeletedConversations() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (me, other, stranger) = (users[0], users[1], users[2])
            var mine: [String] = []
            for index in 0..<4 {
                mine.append(try await fx.createGroup(other, name: "G\(index)", members: [me]).groupId)
            }
            let left = try await fx.createGroup(other, name: "Left", members: [me]).groupId
            _ = try await fx.createGroup(other, name: "Not mine", members: [stranger])
            #expect(try await fx.client.post("/api/im/groups/\(left)/leave", token: me.accessToken).status == 200)
            // Deleting the conversation from my list keeps the group mine.
            #expect(
                try await fx.client.delete("/api/im/conversations/sg:\(mine[0])", token: me.accessToken).status == 200)
            #expect(try await fx.conversation(me, "sg:\(mine[0])") == nil)

            var seen: [String] = []
            var cursor: String?
            for _ in 0..<10 {
                var target = "/api/im/groups?limit=3"
                if let cursor { target += "&cursor=\(cursor)" }
                let page = try await fx.client.get(target, token: me.accessToken)
                #expect(page.status == 200)
                seen += groupIds(page)
                cursor = page.data["cursor"] as? String
                #expect((page.data["hasMore"] as? Bool) == (cursor != nil))
                if cursor == nil { break }
            }
            #expect(seen == mine.sorted())
            let first = try await fx.client.get("/api/im/groups", token: me.accessToken)
            let group = (first.data["groups"] as? [[String: Any]])?.first
            #expect(group?["announcement"] as? String == "" && group?["introduction"] as? String == "")
            #expect(group?["mutedAll"] as? Bool == false)
            #expect(first.data.keys.contains("cursor") && first.data["cursor"] is NSNull)

            // Bad input: 1002 naming the parameter.
            for query in ["cursor=sg:bad", "cursor=", "limit=0", "limit=501", "limit=x"] {
                let bad = try await fx.client.get("/api/im/groups?\(query)", token: me.accessToken)
                #expect(bad.status == 400 && bad.code == 1002, "\(query)")
            }
            #expect(try await fx.client.get("/api/im/groups").status == 401)
        }
    }

    @Test func ownersAndAdminsSetTheProfileAndMembersSeeTheNotice() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (owner, admin, member) = (users[0], users[1], users[2])
            let group = try await fx.createGroup(owner, name: "Club", members: [admin, member])
            let path = "/api/im/groups/\(group.groupId)"
            #expect(
                try await fx.client.patch(
                    "\(path)/members/\(admin.userId)", json: ["role": "admin"], token: owner.accessToken
                )
                .status == 200)
            let start = try await fx.sync(member, cursor: nil)

            // Raw bytes: the members of `ex` in an order the server must keep.
            let patched = try await fx.client.send(
                "PATCH", path, headers: ["Authorization": "Bearer \(admin.accessToken)"],
                body: Array(
                    #"{"announcement":"  Meeting on Friday\nbring snacks ","introduction":"A club","ex":{"tier":2,"tags":["a"]}}"#
                        .utf8))
            #expect(patched.status == 200)
            #expect(patched.string("announcement") == "Meeting on Friday\nbring snacks")
            #expect(patched.string("introduction") == "A club")
            #expect((patched.data["ex"] as? [String: Any])?["tier"] as? Int == 2)
            #expect(patched.string("name") == "Club")
            let read = try await fx.client.get(path, token: member.accessToken)
            #expect(read.string("announcement") == "Meeting on Friday\nbring snacks")
            // `ex` keeps the app's member order.
            #expect(read.text.contains(#""ex":{"tier":2,"tags":["a"]}"#))

            // The notice names what changed, and sync carries it.
            let changes = try await fx.syncUntil(member, from: start.cursor) { changes in
                changes.contains {
                    MessagingFixture.contentObject($0["message"])?["event"] as? String == "group_updated"
                }
            }.changes
            let notice = changes.compactMap { MessagingFixture.contentObject($0["message"]) }.first {
                $0["event"] as? String == "group_updated"
            }
            #expect(notice?["operatorId"] as? String == admin.userId)
            #expect(notice?["announcement"] as? String == "Meeting on Friday\nbring snacks")
            #expect(notice?["introduction"] as? String == "A club")
            #expect((notice?["ex"] as? [String: Any])?["tags"] as? [String] == ["a"])
            #expect(notice?["name"] == nil)

            // null and "" clear; absent fields stay.
            let cleared = try await fx.client.patch(
                path, json: ["announcement": NSNull(), "ex": NSNull(), "introduction": "  "], token: owner.accessToken)
            #expect(cleared.string("announcement") == "" && cleared.string("introduction") == "")
            #expect(cleared.data["ex"] == nil)
            #expect(cleared.string("name") == "Club")

            // Plain members may not; nothing changes.
            let refused = try await fx.client.patch(path, json: ["announcement": "mine now"], token: member.accessToken)
            #expect(refused.status == 403 && refused.code == 1112)
            #expect(try await fx.client.get(path, token: member.accessToken).string("announcement") == "")
        }
    }

    @Test func badProfileInputIsRefusedWithNothingStored() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let group = try await fx.createGroup(users[0], name: "Club", members: [users[1]])
            let path = "/api/im/groups/\(group.groupId)"
            let token = users[0].accessToken
            let before = try await fx.messageCount()
            let bad: [[String: Any]] = [
                [:],
                ["ex": [1, 2]],
                ["ex": "text"],
                ["ex": ["big": String(repeating: "x", count: 4100)]],
                ["announcement": String(repeating: "a", count: 4001)],
                ["introduction": String(repeating: "i", count: 1001)],
                ["announcement": "bell \u{7}"],
                ["announcement": 5],
                ["name": 5],
                ["name": "ok", "introduction": ["not": "text"]],
            ]
            for body in bad {
                let response = try await fx.client.patch(path, json: body, token: token)
                #expect(response.status == 400 && response.code == 1002, "\(body)")
                #expect((response.json["message"] as? String ?? "").contains("`"), "\(body)")
            }
            let notJSON = try await fx.client.send(
                "PATCH", path, headers: ["Authorization": "Bearer \(token)"], body: Array("{nope".utf8))
            #expect(notJSON.status == 400 && notJSON.code == 1001)
            #expect(try await fx.messageCount() == before)
            let read = try await fx.client.get(path, token: token)
            #expect(read.string("name") == "Club" && read.string("announcement") == "")
            // The largest allowed values are stored.
            let largest = try await fx.client.patch(
                path,
                json: [
                    "announcement": String(repeating: "a", count: 4000),
                    "introduction": String(repeating: "i", count: 1000),
                ], token: token)
            #expect(largest.status == 200)
            #expect(largest.string("announcement")?.count == 4000)
        }
    }

    /// Issue 20's mutes through the user routes: the same service and send verdict as the admin API.
    @Test func ownersAndAdminsMuteMembersForATimeAndTheWholeGroup() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let (owner, admin, member, other) = (users[0], users[1], users[2], users[3])
            let group = try await fx.createGroup(owner, members: [admin, member, other])
            let path = "/api/im/groups/\(group.groupId)"
            #expect(
                try await fx.client.patch(
                    "\(path)/members/\(admin.userId)", json: ["role": "admin"], token: owner.accessToken
                ).status == 200)
            let future = Int64((Date().timeIntervalSince1970 + 3600) * 1000)

            // A timed mute: refused with 1130 until it ends; others still speak.
            let muted = try await fx.client.post(
                "\(path)/members/\(member.userId)/mute", json: ["until": future], token: admin.accessToken)
            #expect(muted.status == 200)
            let members = try await fx.client.get("\(path)/members", token: member.accessToken)
            let row = (members.data["members"] as? [[String: Any]])?.first { $0["userId"] as? String == member.userId }
            #expect(row?["mutedUntil"] != nil)
            let refused = try await fx.send(member, to: group.groupId, chatType: "group", content: "hi")
            #expect(refused.status == 403 && refused.code == 1130)
            try await fx.sendOK(other, to: group.groupId, chatType: "group", content: "still here")
            // Plain members mute nobody; admins do not mute admins or the owner.
            #expect(
                try await fx.client.post(
                    "\(path)/members/\(other.userId)/mute", json: ["until": future], token: member.accessToken
                ).code == 1112)
            #expect(
                try await fx.client.post(
                    "\(path)/members/\(owner.userId)/mute", json: ["until": future], token: admin.accessToken
                ).code == 1112)
            for bad in [["until": -1], ["until": "soon"], ["until": 253_402_300_800_000]] as [[String: Any]] {
                let response = try await fx.client.post(
                    "\(path)/members/\(member.userId)/mute", json: bad, token: owner.accessToken)
                #expect(response.status == 400 && response.code == 1002, "\(bad)")
            }
            // A past time lifts it: allowed again.
            let past = Int64((Date().timeIntervalSince1970 - 60) * 1000)
            #expect(
                try await fx.client.post(
                    "\(path)/members/\(member.userId)/mute", json: ["until": past], token: owner.accessToken
                ).status == 200)
            try await fx.sendOK(member, to: group.groupId, chatType: "group", content: "back")

            // Mute all: members refused with 1131, owner and admins speak; lifted, members speak again.
            let all = try await fx.client.post("\(path)/mute-all", json: ["muted": true], token: admin.accessToken)
            #expect(all.status == 200 && all.data["mutedAll"] as? Bool == true)
            let silenced = try await fx.send(other, to: group.groupId, chatType: "group", content: "hi")
            #expect(silenced.status == 403 && silenced.code == 1131)
            try await fx.sendOK(admin, to: group.groupId, chatType: "group", content: "admins speak")
            try await fx.sendOK(owner, to: group.groupId, chatType: "group", content: "owners speak")
            #expect(
                try await fx.client.post("\(path)/mute-all", json: ["muted": false], token: owner.accessToken)
                    .status == 200)
            try await fx.sendOK(other, to: group.groupId, chatType: "group", content: "free again")

            let history = try await fx.history(owner, group.conversationId, query: "?limit=100")
            let events = (history.data["messages"] as? [[String: Any]] ?? []).compactMap {
                MessagingFixture.contentObject($0)?["event"] as? String
            }
            #expect(
                events == [
                    "group_created", "role_changed", "member_muted", "member_muted", "group_muted", "group_unmuted",
                ])
        }
    }
}
