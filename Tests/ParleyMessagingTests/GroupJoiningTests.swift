import Foundation
import ParleyLiveSupport
import Testing

/// Join policies, join requests and public group search (issue 22).
@Suite("Group joining", .serialized)
struct GroupJoiningTests {
    func notifyEvents(_ fx: MessagingFixture, _ session: Session, _ conversationId: String) async throws -> [String] {
        let response = try await fx.history(session, conversationId, query: "?limit=100")
        return (response.data["messages"] as? [[String: Any]] ?? []).compactMap { message in
            guard message["msgType"] as? String == "notify" else { return nil }
            return MessagingFixture.contentObject(message)?["event"] as? String
        }
    }

    func searchIds(_ fx: MessagingFixture, _ session: Session, _ query: String) async throws -> [String] {
        let response = try await fx.client.get("/api/im/groups/search?q=\(query)", token: session.accessToken)
        #expect(response.status == 200, "\(response.text)")
        return (response.data["groups"] as? [[String: Any]] ?? []).compactMap { $0["groupId"] as? String }
    }

    /// The sync changes of `type` that reach `session` after `cursor` (waiting for at least `count`).
    func userEvents(_ fx: MessagingFixture, _ session: Session, from cursor: String, type: String, count: Int = 1)
        async throws -> [[String: Any]]
    {
        try await fx.syncUntil(session, from: cursor) { changes in
            changes.count { $0["type"] as? String == type } >= count
        }.changes.filter { $0["type"] as? String == type }
    }

    @Test func invitationOnlyIsTheDefaultAndNobodyJoinsOrFindsIt() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (owner, member, stranger) = (users[0], users[1], users[2])
            let group = try await fx.createGroup(owner, name: "Hidden Club", members: [member])
            let info = try await fx.client.get("/api/im/groups/\(group.groupId)", token: owner.accessToken)
            #expect(info.string("joinPolicy") == "invite_only")
            let refused = try await fx.client.post("/api/im/groups/\(group.groupId)/join", token: stranger.accessToken)
            #expect(refused.status == 403 && refused.code == 1137)
            let again = try await fx.client.post("/api/im/groups/\(group.groupId)/join", token: member.accessToken)
            #expect(again.status == 409 && again.code == 1138)
            #expect(try await fx.client.post("/api/im/groups/nope/join", token: stranger.accessToken).code == 1104)
            #expect(try await searchIds(fx, stranger, "hidden").isEmpty)
            #expect(try await searchIds(fx, stranger, group.groupId).isEmpty)
            // Bad input: 1002 naming the field.
            for query in ["", "q=", "q=%20%20", "q=\(String(repeating: "x", count: 65))", "q=a&limit=51"] {
                let bad = try await fx.client.get("/api/im/groups/search?\(query)", token: stranger.accessToken)
                #expect(bad.status == 400 && bad.code == 1002, "\(query)")
            }
            let badPolicy = try await fx.client.patch(
                "/api/im/groups/\(group.groupId)", json: ["joinPolicy": "anyone"], token: owner.accessToken)
            #expect(badPolicy.status == 400 && badPolicy.code == 1002)
            // A group id that a route's literal segment would shadow is refused.
            let reserved = try await fx.admin(
                "POST", "/api/admin/groups", json: ["ownerId": owner.userId, "name": "X", "groupId": "search"])
            #expect(reserved.status == 400 && reserved.code == 1002)
        }
    }

    @Test func theJoinPolicyIsChosenAtCreation() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (owner, stranger) = (users[0], users[1])
            let created = try await fx.client.post(
                "/api/im/groups", json: ["name": "Walk-in", "memberIds": [], "joinPolicy": "open"],
                token: owner.accessToken)
            #expect(created.status == 201 && created.string("joinPolicy") == "open")
            let groupId = try #require(created.string("groupId"))
            let joined = try await fx.client.post("/api/im/groups/\(groupId)/join", token: stranger.accessToken)
            #expect(joined.status == 200 && joined.data["joined"] as? Bool == true)
            let byApp = try await fx.admin(
                "POST", "/api/admin/groups",
                json: ["ownerId": owner.userId, "name": "Vetted", "joinPolicy": "approval"])
            #expect(byApp.status == 201 && byApp.string("joinPolicy") == "approval")
            let defaulted = try await fx.client.post(
                "/api/im/groups", json: ["name": "Plain", "memberIds": [], "joinPolicy": NSNull()],
                token: owner.accessToken)
            #expect(defaulted.status == 201 && defaulted.string("joinPolicy") == "invite_only")
            let before = try await fx.database.query("SELECT count(*) AS n FROM groups")[0].decode("n", as: Int.self)
            let bad = try await fx.client.post(
                "/api/im/groups", json: ["name": "Bad", "memberIds": [], "joinPolicy": "anyone"],
                token: owner.accessToken)
            #expect(bad.status == 400 && bad.code == 1002)
            #expect(
                try await fx.database.query("SELECT count(*) AS n FROM groups")[0].decode("n", as: Int.self) == before)
        }
    }

    @Test func anOpenGroupIsFoundAndJoinedAtOnce() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (owner, member, newcomer) = (users[0], users[1], users[2])
            let group = try await fx.createGroup(owner, name: "Chess Lovers", members: [member])
            let opened = try await fx.client.patch(
                "/api/im/groups/\(group.groupId)", json: ["joinPolicy": "open", "introduction": "We play"],
                token: owner.accessToken)
            #expect(opened.string("joinPolicy") == "open")
            #expect(try await searchIds(fx, newcomer, "chess") == [group.groupId])
            #expect(try await searchIds(fx, newcomer, "CHESS%20LO") == [group.groupId])
            #expect(try await searchIds(fx, newcomer, group.groupId) == [group.groupId])
            #expect(try await searchIds(fx, newcomer, "lovers").isEmpty)
            let found = try await fx.client.get("/api/im/groups/search?q=chess", token: newcomer.accessToken)
            let card = (found.data["groups"] as? [[String: Any]])?.first
            #expect(card?["introduction"] as? String == "We play" && card?["memberCount"] as? Int == 2)
            #expect(card?["announcement"] == nil && card?["ownerId"] == nil)

            let joined = try await fx.client.post(
                "/api/im/groups/\(group.groupId)/join", token: newcomer.accessToken)
            #expect(joined.status == 200 && joined.data["joined"] as? Bool == true)
            #expect((joined.data["group"] as? [String: Any])?["memberCount"] as? Int == 3)
            try await fx.sendOK(newcomer, to: group.groupId, chatType: "group", content: "hello all")
            #expect(try await notifyEvents(fx, newcomer, group.conversationId) == ["member_joined"])
            #expect(
                try await notifyEvents(fx, member, group.conversationId) == [
                    "group_created", "group_updated", "member_joined",
                ])
            let mine = try await fx.client.get("/api/im/groups", token: newcomer.accessToken)
            #expect((mine.data["groups"] as? [[String: Any]])?.first?["groupId"] as? String == group.groupId)
            #expect(
                try await fx.client.post("/api/im/groups/\(group.groupId)/join", token: newcomer.accessToken).code
                    == 1138)

            // Dissolved: neither found nor joined.
            #expect(
                try await fx.client.delete("/api/im/groups/\(group.groupId)", token: owner.accessToken).status == 200)
            #expect(try await searchIds(fx, newcomer, "chess").isEmpty)
            let late = try await fx.users(1, prefix: "late")[0]
            #expect(
                try await fx.client.post("/api/im/groups/\(group.groupId)/join", token: late.accessToken).code == 1110)
        }
    }

    @Test func approvalTakesRequestsThatAdminsAcceptOrReject() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let (owner, admin, member, asker) = (users[0], users[1], users[2], users[3])
            let group = try await fx.createGroup(owner, name: "Book Club", members: [admin, member])
            let path = "/api/im/groups/\(group.groupId)"
            #expect(
                try await fx.client.patch(
                    "\(path)/members/\(admin.userId)", json: ["role": "admin"], token: owner.accessToken
                )
                .status == 200)
            #expect(
                try await fx.client.patch(path, json: ["joinPolicy": "approval"], token: admin.accessToken).status
                    == 200)
            let adminStart = try await fx.sync(admin, cursor: nil).cursor
            let askerStart = try await fx.sync(asker, cursor: nil).cursor

            let tooLong = try await fx.client.post(
                "\(path)/join", json: ["message": String(repeating: "m", count: 201)], token: asker.accessToken)
            #expect(tooLong.status == 400 && tooLong.code == 1002)
            let asked = try await fx.client.post(
                "\(path)/join", json: ["message": "let me in"], token: asker.accessToken)
            #expect(asked.status == 200 && asked.data["joined"] as? Bool == false)
            let request = asked.data["request"] as? [String: Any]
            #expect(request?["status"] as? String == "pending" && request?["message"] as? String == "let me in")
            // Asking twice is the same request.
            let twice = try await fx.client.post("\(path)/join", token: asker.accessToken)
            #expect((twice.data["request"] as? [String: Any])?["message"] as? String == "let me in")
            // Not a member yet.
            #expect(try await fx.send(asker, to: group.groupId, chatType: "group").code == 1100)

            // The owner and admins are told, and list it; members and strangers may not list.
            let told = try await userEvents(fx, admin, from: adminStart, type: "group_join_request")
            #expect(told.count == 1 && told.first?["userId"] as? String == asker.userId)
            let listed = try await fx.client.get("\(path)/join-requests", token: owner.accessToken)
            #expect(
                (listed.data["requests"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String } == [
                    asker.userId
                ])
            #expect(try await fx.client.get("\(path)/join-requests", token: member.accessToken).code == 1112)
            #expect(try await fx.client.get("\(path)/join-requests", token: asker.accessToken).code == 1100)
            #expect(
                try await fx.client.post("\(path)/join-requests/\(asker.userId)/accept", token: member.accessToken).code
                    == 1112)
            #expect(
                try await fx.client.post("\(path)/join-requests/\(member.userId)/accept", token: admin.accessToken).code
                    == 1139)

            // Rejected: the requester is told; it cannot be accepted afterwards.
            let rejected = try await fx.client.post(
                "\(path)/join-requests/\(asker.userId)/reject", token: admin.accessToken)
            #expect(rejected.status == 200 && rejected.string("status") == "rejected")
            #expect(rejected.string("operatorId") == admin.userId)
            let verdict = try await userEvents(fx, asker, from: askerStart, type: "group_join_request_handled")
            #expect(verdict.first?["status"] as? String == "rejected")
            #expect(
                try await fx.client.post("\(path)/join-requests/\(asker.userId)/accept", token: owner.accessToken).code
                    == 1140)
            let afterReject = try await fx.client.get("\(path)/join-requests", token: owner.accessToken)
            #expect((afterReject.data["requests"] as? [Any])?.isEmpty == true)

            // Asked again, accepted: a member, and the members see `member_joined`.
            #expect(try await fx.client.post("\(path)/join", token: asker.accessToken).status == 200)
            let accepted = try await fx.client.post(
                "\(path)/join-requests/\(asker.userId)/accept", token: owner.accessToken)
            #expect(accepted.status == 200 && accepted.string("status") == "accepted")
            try await fx.sendOK(asker, to: group.groupId, chatType: "group", content: "thanks")
            let joinedNotice = try await fx.history(member, group.conversationId, query: "?limit=100")
            let notice = (joinedNotice.data["messages"] as? [[String: Any]] ?? []).compactMap {
                MessagingFixture.contentObject($0)
            }.last { $0["event"] as? String == "member_joined" }
            #expect(notice?["userId"] as? String == asker.userId && notice?["operatorId"] as? String == owner.userId)
            let handled = try await userEvents(
                fx, asker, from: askerStart, type: "group_join_request_handled", count: 2)
            #expect(handled.compactMap { $0["status"] as? String } == ["rejected", "accepted"])
            #expect(try await fx.client.get(path, token: asker.accessToken).data["memberCount"] as? Int == 4)
        }
    }

    @Test func joiningKeepsTheMemberLimit() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_IM_GROUP_MEMBER_LIMIT": "3"]) { fx in
            let users = try await fx.users(5)
            let (owner, member) = (users[0], users[1])
            let open = try await fx.createGroup(owner, name: "Open", members: [member])
            _ = try await fx.client.patch(
                "/api/im/groups/\(open.groupId)", json: ["joinPolicy": "open"], token: owner.accessToken)
            #expect(
                try await fx.client.post("/api/im/groups/\(open.groupId)/join", token: users[2].accessToken).status
                    == 200)
            let full = try await fx.client.post("/api/im/groups/\(open.groupId)/join", token: users[3].accessToken)
            #expect(full.status == 409 && full.code == 1111)

            let approval = try await fx.createGroup(owner, name: "Approval", members: [member])
            _ = try await fx.client.patch(
                "/api/im/groups/\(approval.groupId)", json: ["joinPolicy": "approval"], token: owner.accessToken)
            for user in [users[2], users[3]] {
                #expect(
                    try await fx.client.post("/api/im/groups/\(approval.groupId)/join", token: user.accessToken).status
                        == 200)
            }
            let path = "/api/im/groups/\(approval.groupId)/join-requests"
            #expect(
                try await fx.client.post("\(path)/\(users[2].userId)/accept", token: owner.accessToken).status == 200)
            let over = try await fx.client.post("\(path)/\(users[3].userId)/accept", token: owner.accessToken)
            #expect(over.status == 409 && over.code == 1111)
            // Nothing half-stored: the request still waits.
            let waiting = try await fx.client.get(path, token: owner.accessToken)
            #expect(
                (waiting.data["requests"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String } == [
                    users[3].userId
                ])
        }
    }

    @Test func aDeletedAccountsRequestsGo() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (owner, leaving, staying) = (users[0], users[1], users[2])
            let group = try await fx.createGroup(owner, name: "Approval", members: [])
            let path = "/api/im/groups/\(group.groupId)"
            _ = try await fx.client.patch(path, json: ["joinPolicy": "approval"], token: owner.accessToken)
            for user in [leaving, staying] {
                #expect(try await fx.client.post("\(path)/join", token: user.accessToken).status == 200)
            }
            #expect(try await fx.admin("DELETE", "/api/admin/users/\(leaving.userId)").status == 200)
            let waiting = try await fx.client.get("\(path)/join-requests", token: owner.accessToken)
            #expect(
                (waiting.data["requests"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String } == [
                    staying.userId
                ])
        }
    }
}

/// Bans keep a user out of a group that anyone may join (issue 22).
@Suite("Group bans", .serialized)
struct GroupBanTests {
    func put(_ fx: MessagingFixture, _ target: String, _ session: Session) async throws -> TestResponse {
        try await fx.client.send("PUT", target, headers: ["Authorization": "Bearer \(session.accessToken)"])
    }

    @Test func aBannedMemberIsRemovedAndCannotJoinUntilTheBanIsLifted() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let (owner, admin, troll, other) = (users[0], users[1], users[2], users[3])
            let created = try await fx.client.post(
                "/api/im/groups",
                json: ["name": "Open", "memberIds": [admin.userId, troll.userId], "joinPolicy": "open"],
                token: owner.accessToken)
            let groupId = try #require(created.string("groupId"))
            let path = "/api/im/groups/\(groupId)"
            #expect(
                try await fx.client.patch(
                    "\(path)/members/\(admin.userId)", json: ["role": "admin"], token: owner.accessToken
                )
                .status == 200)

            let banned = try await put(fx, "\(path)/bans/\(troll.userId)", admin)
            #expect(banned.status == 200 && banned.string("userId") == troll.userId)
            #expect(banned.string("bannedBy") == admin.userId && banned.string("bannedAt") != nil)
            // Removed, with a notice the members see.
            #expect(try await fx.conversation(troll, "sg:\(groupId)") == nil)
            let history = try await fx.history(owner, "sg:\(groupId)")
            let notices = (history.data["messages"] as? [[String: Any]] ?? []).compactMap {
                MessagingFixture.contentObject($0)?["event"] as? String
            }
            #expect(notices.last == "member_banned")
            // Kept out: joining answers 1146; banning again answers the same ban.
            let refused = try await fx.client.post("\(path)/join", token: troll.accessToken)
            #expect(refused.status == 403 && refused.code == 1146)
            #expect(try await put(fx, "\(path)/bans/\(troll.userId)", owner).string("bannedBy") == admin.userId)
            // A user who is no member yet may be banned too.
            #expect(try await put(fx, "\(path)/bans/\(other.userId)", owner).status == 200)
            let list = try await fx.client.get("\(path)/bans", token: admin.accessToken)
            #expect(list.status == 200)
            #expect(
                (list.data["bans"] as? [[String: Any]])?.compactMap { $0["userId"] as? String } == [
                    other.userId, troll.userId,
                ])
            #expect(try await fx.client.get("\(path)/bans", token: troll.accessToken).code == 1100)

            // Rules: an admin cannot ban the owner, nobody bans themself, members do not ban, unknown users are named.
            #expect(try await put(fx, "\(path)/bans/\(owner.userId)", admin).code == 1112)
            #expect(try await put(fx, "\(path)/bans/\(owner.userId)", owner).code == 1117)
            #expect(try await put(fx, "\(path)/bans/ghost", owner).code == 1103)
            #expect(try await put(fx, "\(path)/bans/bad%20id", owner).code == 1002)

            // Lifted: the user joins again; adding a banned user lifts their ban.
            let lifted = try await fx.client.delete("\(path)/bans/\(troll.userId)", token: admin.accessToken)
            #expect(lifted.status == 200 && lifted.data["banned"] as? Bool == false)
            #expect(try await fx.client.post("\(path)/join", token: troll.accessToken).status == 200)
            #expect(
                try await fx.client.post("\(path)/members", json: ["userIds": [other.userId]], token: owner.accessToken)
                    .status == 200)
            let after = try await fx.client.get("\(path)/bans", token: owner.accessToken)
            #expect((after.data["bans"] as? [[String: Any]])?.isEmpty == true)
        }
    }

    @Test func aBannedUserCannotAskToJoinAndTheirRequestIsRejected() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (owner, asker) = (users[0], users[1])
            let created = try await fx.client.post(
                "/api/im/groups", json: ["name": "Vetted", "memberIds": [], "joinPolicy": "approval"],
                token: owner.accessToken)
            let path = "/api/im/groups/\(try #require(created.string("groupId")))"
            #expect(try await fx.client.post("\(path)/join", token: asker.accessToken).status == 200)
            #expect(try await put(fx, "\(path)/bans/\(asker.userId)", owner).status == 200)
            let pending = try await fx.client.get("\(path)/join-requests", token: owner.accessToken)
            #expect((pending.data["requests"] as? [[String: Any]])?.isEmpty == true)
            let again = try await fx.client.post("\(path)/join", token: asker.accessToken)
            #expect(again.status == 403 && again.code == 1146)
        }
    }
}
