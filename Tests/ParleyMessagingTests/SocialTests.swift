import Foundation
import ParleyApp
import ParleyLiveSupport
import ParleyTestSupport
import Testing

/// Friends, requests and blocks over REST (issue 19), and the direct-message policy: each answer, each refusal
/// with its code and nothing half-stored, and the changes each side finds through sync.
@Suite("Social graph")
struct SocialTests {
    static func request(_ fx: MessagingFixture, _ from: Session, to: Session, message: String? = nil) async throws
        -> TestResponse
    {
        var body: [String: Any] = ["userId": to.userId]
        if let message { body["message"] = message }
        return try await fx.client.post("/api/im/friends/requests", json: body, token: from.accessToken)
    }

    static func friendIds(_ fx: MessagingFixture, _ session: Session) async throws -> [String] {
        let answer = try await fx.client.get("/api/im/friends?limit=500", token: session.accessToken)
        #expect(answer.status == 200, "\(answer.text)")
        return (answer.data["friends"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String }
    }

    static func count(_ fx: MessagingFixture, _ sql: String) async throws -> Int {
        try await fx.database.query(.init(unsafeSQL: sql))[0].decode(0, as: Int.self)
    }

    @Test func aRequestAcceptedMakesBothFriendsAndEachSideSyncsIt() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let bobCursor = try await fx.sync(bob, cursor: nil).cursor
            let aliceCursor = try await fx.sync(alice, cursor: nil).cursor

            let sent = try await Self.request(fx, alice, to: bob, message: "hi, it's Alice")
            #expect(sent.status == 201, "\(sent.text)")
            let request = try #require(sent.data["request"] as? [String: Any])
            #expect(request["status"] as? String == "pending" && request["fromId"] as? String == alice.userId)
            #expect((request["user"] as? [String: Any])?["id"] as? String == bob.userId)
            #expect(sent.data.keys.contains("friend") && sent.data["friend"] is NSNull)
            let requestId = try #require(request["id"] as? String)

            // Asking twice, and the other side's view of it.
            #expect(try await Self.request(fx, alice, to: bob).code == 1121)
            let incoming = try await fx.client.get(
                "/api/im/friends/requests?direction=incoming", token: bob.accessToken)
            #expect(incoming.data["cursor"] is NSNull, "the last page names no next one: \(incoming.text)")
            let listed = try #require((incoming.data["requests"] as? [[String: Any]])?.first)
            #expect(listed["id"] as? String == requestId && listed["message"] as? String == "hi, it's Alice")
            #expect((listed["user"] as? [String: Any])?["id"] as? String == alice.userId)
            let outgoing = try await fx.client.get(
                "/api/im/friends/requests?direction=outgoing", token: alice.accessToken)
            #expect((outgoing.data["requests"] as? [[String: Any]])?.count == 1)
            // Only the recipient accepts.
            let byAlice = try await fx.client.post(
                "/api/im/friends/requests/\(requestId)/accept", token: alice.accessToken)
            #expect(byAlice.code == 1123)

            let accepted = try await fx.client.post(
                "/api/im/friends/requests/\(requestId)/accept", json: ["remark": "Ali"], token: bob.accessToken)
            #expect(accepted.status == 200, "\(accepted.text)")
            #expect(accepted.string("userId") == alice.userId && accepted.string("remark") == "Ali")
            #expect((accepted.data["user"] as? [String: Any])?["id"] as? String == alice.userId)
            #expect(try await Self.friendIds(fx, alice) == [bob.userId])
            #expect(try await Self.friendIds(fx, bob) == [alice.userId])
            // Handled once; friends already.
            #expect(
                try await fx.client.post("/api/im/friends/requests/\(requestId)/accept", token: bob.accessToken).code
                    == 1124)
            #expect(try await Self.request(fx, bob, to: alice).code == 1122)

            // Sync: the recipient saw the request, then the friendship; the sender too (their other devices).
            let atBob = try await fx.syncUntil(bob, from: bobCursor, count: 2).changes.compactMap {
                $0["type"] as? String
            }
            #expect(atBob == ["friend_request", "friend_added"])
            // The greeting comes through sync as in the live event (a field named like a message change's).
            let synced = try await fx.syncUntil(bob, from: bobCursor, count: 1).changes
            #expect(
                synced.first { $0["type"] as? String == "friend_request" }?["message"] as? String == "hi, it's Alice")
            let atAlice = try await fx.syncUntil(alice, from: aliceCursor, count: 2).changes
            #expect(atAlice.compactMap { $0["type"] as? String } == ["friend_request", "friend_added"])
            let added = try #require(atAlice.last)
            #expect(added["userId"] as? String == bob.userId && added["remark"] as? String == "")
        }
    }

    @Test func askingSomeoneWhoAskedYouMakesFriendsAtOnce() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (carol, dave) = (users[0], users[1])
            #expect(try await Self.request(fx, carol, to: dave).status == 201)
            let mutual = try await Self.request(fx, dave, to: carol)
            #expect(mutual.status == 201, "\(mutual.text)")
            #expect((mutual.data["request"] as? [String: Any])?["status"] as? String == "accepted")
            #expect((mutual.data["friend"] as? [String: Any])?["userId"] as? String == carol.userId)
            #expect(try await Self.friendIds(fx, carol) == [dave.userId])
            #expect(
                try await Self.count(fx, "SELECT count(*) FROM friend_requests WHERE status = 'pending'") == 0)
        }
    }

    @Test func rejectWithdrawRemarkAndRemoval() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let aliceCursor = try await fx.sync(alice, cursor: nil).cursor
            let first = try #require(
                (try await Self.request(fx, alice, to: bob).data["request"] as? [String: Any])?["id"] as? String)
            let rejected = try await fx.client.post("/api/im/friends/requests/\(first)/reject", token: bob.accessToken)
            #expect(rejected.status == 200 && rejected.string("status") == "rejected", "\(rejected.text)")
            #expect(try await Self.friendIds(fx, alice).isEmpty)
            // The sender withdraws a new one; only the sender may.
            let second = try #require(
                (try await Self.request(fx, alice, to: carol).data["request"] as? [String: Any])?["id"] as? String)
            #expect(
                try await fx.client.delete("/api/im/friends/requests/\(second)", token: carol.accessToken).code == 1123)
            let withdrawn = try await fx.client.delete("/api/im/friends/requests/\(second)", token: alice.accessToken)
            #expect(withdrawn.string("status") == "withdrawn", "\(withdrawn.text)")
            #expect(
                try await fx.client.delete("/api/im/friends/requests/\(second)", token: alice.accessToken).code == 1124)
            let all = try await fx.client.get(
                "/api/im/friends/requests?direction=outgoing&status=all", token: alice.accessToken)
            #expect(
                (all.data["requests"] as? [[String: Any]])?.compactMap { $0["status"] as? String } == [
                    "withdrawn", "rejected",
                ])
            let pending = try await fx.client.get(
                "/api/im/friends/requests?direction=outgoing", token: alice.accessToken)
            #expect((pending.data["requests"] as? [[String: Any]])?.isEmpty == true)

            // Friends, a remark, then the friendship ends on both sides; an incremental list says so.
            let third = try #require(
                (try await Self.request(fx, alice, to: bob).data["request"] as? [String: Any])?["id"] as? String)
            #expect(
                try await fx.client.post("/api/im/friends/requests/\(third)/accept", token: bob.accessToken).status
                    == 200)
            let full = try await fx.client.get("/api/im/friends", token: alice.accessToken)
            let since = try #require(full.string("cursor"))
            let renamed = try await fx.client.patch(
                "/api/im/friends/\(bob.userId)", json: ["remark": "Bobby"], token: alice.accessToken)
            #expect(renamed.string("remark") == "Bobby", "\(renamed.text)")
            #expect(
                try await fx.client.patch(
                    "/api/im/friends/\(carol.userId)", json: ["remark": "x"], token: alice.accessToken
                )
                .code == 1127)
            let removed = try await fx.client.delete("/api/im/friends/\(alice.userId)", token: bob.accessToken)
            #expect(removed.status == 200, "\(removed.text)")
            let aliceFriends = try await Self.friendIds(fx, alice)
            let bobFriends = try await Self.friendIds(fx, bob)
            #expect(aliceFriends.isEmpty && bobFriends.isEmpty)
            #expect(try await fx.client.delete("/api/im/friends/\(bob.userId)", token: alice.accessToken).code == 1127)
            let changes = try await Self.friendChanges(fx, alice, since: since) { !$0.removed.isEmpty }
            #expect(changes.removed == [bob.userId])

            let kinds = try await fx.syncUntil(alice, from: aliceCursor, count: 8).changes.compactMap {
                $0["type"] as? String
            }
            #expect(
                kinds == [
                    "friend_request", "friend_request_rejected", "friend_request", "friend_request_withdrawn",
                    "friend_request", "friend_added", "friend_updated", "friend_removed",
                ], "\(kinds)")
        }
    }

    @Test func blocksRefuseMessagesAndRequestsButNotGroups() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let request = try #require(
                (try await Self.request(fx, alice, to: bob).data["request"] as? [String: Any])?["id"] as? String)
            _ = try await fx.client.post("/api/im/friends/requests/\(request)/accept", token: bob.accessToken)
            _ = try await fx.sendOK(bob, to: alice.userId, content: "before")
            let group = try await fx.createGroup(carol, members: [alice, bob])

            let blocked = try await fx.client.send(
                "PUT", "/api/im/blocks/\(bob.userId)",
                headers: [
                    "Authorization": "Bearer \(alice.accessToken)"
                ])
            #expect(blocked.status == 201, "\(blocked.text)")
            #expect(blocked.string("userId") == bob.userId)
            let again = try await fx.client.send(
                "PUT", "/api/im/blocks/\(bob.userId)",
                headers: [
                    "Authorization": "Bearer \(alice.accessToken)"
                ])
            #expect(again.status == 200)
            // Blocking ended the friendship.
            #expect(try await Self.friendIds(fx, bob).isEmpty)

            let messages = try await fx.messageCount()
            let refused = try await fx.send(bob, to: alice.userId, content: "after")
            #expect(refused.status == 403 && refused.code == 1119 && refused.message == "refused", "\(refused.text)")
            #expect(try await Self.request(fx, bob, to: alice).code == 1119)
            #expect(try await Self.request(fx, alice, to: bob).code == 1125)
            #expect(try await fx.messageCount() == messages)
            // The blocker may still write; group messages flow both ways.
            #expect(try await fx.send(alice, to: bob.userId, content: "I can").status == 201)
            #expect(try await fx.send(bob, to: group.groupId, chatType: "group", content: "group").status == 201)

            let list = try await fx.client.get("/api/im/blocks", token: alice.accessToken)
            #expect((list.data["blocks"] as? [[String: Any]])?.compactMap { $0["userId"] as? String } == [bob.userId])
            #expect(list.data["cursor"] is NSNull && list.data["hasMore"] as? Bool == false)
            let lifted = try await fx.client.delete("/api/im/blocks/\(bob.userId)", token: alice.accessToken)
            #expect(lifted.data["unblocked"] as? Bool == true, "\(lifted.text)")
            #expect(
                try await fx.client.delete("/api/im/blocks/\(bob.userId)", token: alice.accessToken).data["unblocked"]
                    as? Bool == false)
            #expect(try await fx.send(bob, to: alice.userId, content: "again").status == 201)
        }
    }

    @Test func theFriendsPolicyRefusesStrangersOnEveryPath() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            _ = try await fx.sendOK(alice, to: carol.userId, content: "from before")
            let request = try #require(
                (try await Self.request(fx, alice, to: bob).data["request"] as? [String: Any])?["id"] as? String)
            _ = try await fx.client.post("/api/im/friends/requests/\(request)/accept", token: bob.accessToken)
            let lines = try await CommandOutput.lines {
                try await AppCommand.run(
                    ["update", fx.appKey, "--direct-messages", "friends"], configuration: fx.live.app.configuration,
                    output: $0)
            }
            #expect(lines.contains("directMessages  friends"))

            let conversations = try await Self.count(fx, "SELECT count(*) FROM conversations")
            #expect(try await fx.send(bob, to: carol.userId, content: "stranger").code == 1120)
            // The rule is strict: a conversation from before is no exception.
            #expect(try await fx.send(carol, to: alice.userId, content: "old chat").code == 1120)
            #expect(try await Self.count(fx, "SELECT count(*) FROM conversations") == conversations)
            #expect(try await fx.send(alice, to: bob.userId, content: "friend").status == 201)
            let withFriends = try await Self.count(fx, "SELECT count(*) FROM conversations")

            // The batch path (several sends in one statement) answers the same.
            let outcomes = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        let target = index.isMultiple(of: 2) ? alice.userId : carol.userId
                        let answer = try await fx.send(bob, to: target, content: "b\(index)")
                        return answer.status == 201 ? 0 : answer.code
                    }
                }
                var codes: [Int?] = []
                for try await code in group { codes.append(code) }
                return codes
            }
            #expect(outcomes.filter { $0 == 1120 }.count == 3 && outcomes.filter { $0 == 0 }.count == 3, "\(outcomes)")
            #expect(try await Self.count(fx, "SELECT count(*) FROM conversations") == withFriends)
        }
    }

    @Test func badInputGetsClearCodesAndStoresNothing() async throws {
        try await MessagingFixture.run(environment: ["PARLEY_IM_MAX_FRIENDS": "1", "PARLEY_IM_MAX_BLOCKS": "1"]) { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let bodies: [([String: Any], Int)] = [
                (["userId": alice.userId], 1002),
                (["userId": "bad id!"], 1002),
                (["userId": "u_nobody"], 1103),
                (["userId": bob.userId, "message": String(repeating: "m", count: 201)], 1002),
                (["userId": bob.userId, "message": "a\u{0}b"], 1002),
                (["message": "no user"], 1002),
            ]
            for (body, code) in bodies {
                let answer = try await fx.client.post("/api/im/friends/requests", json: body, token: alice.accessToken)
                #expect(answer.code == code, "\(body): \(answer.status) \(answer.text)")
            }
            for id in ["0", "abc", "99999999999999999999", "12"] {
                #expect(
                    try await fx.client.post("/api/im/friends/requests/\(id)/accept", token: alice.accessToken).code
                        == 1123)
            }
            let queries = ["direction=sideways", "status=maybe", "limit=0", "limit=201", "cursor=x"]
            for query in queries {
                let answer = try await fx.client.get("/api/im/friends/requests?\(query)", token: alice.accessToken)
                #expect(answer.code == 1002, "\(query): \(answer.text)")
            }
            for query in ["since=garbage", "since=L1.bad%20id", "limit=501"] {
                #expect(try await fx.client.get("/api/im/friends?\(query)", token: alice.accessToken).code == 1002)
            }
            #expect(try await Self.count(fx, "SELECT count(*) FROM friend_requests") == 0)

            // The limit: alice has one friend; a second would pass it, from either side.
            let first = try #require(
                (try await Self.request(fx, alice, to: bob).data["request"] as? [String: Any])?["id"] as? String)
            _ = try await fx.client.post("/api/im/friends/requests/\(first)/accept", token: bob.accessToken)
            #expect(try await Self.request(fx, alice, to: carol).code == 1126)
            let toAlice = try #require(
                (try await Self.request(fx, carol, to: alice).data["request"] as? [String: Any])?["id"] as? String)
            #expect(
                try await fx.client.post("/api/im/friends/requests/\(toAlice)/accept", token: alice.accessToken).code
                    == 1126)
            #expect(try await Self.count(fx, "SELECT count(*) FROM friendships WHERE active") == 2)

            let auth = ["Authorization": "Bearer \(alice.accessToken)"]
            #expect(try await fx.client.send("PUT", "/api/im/blocks/\(alice.userId)", headers: auth).code == 1002)
            #expect(try await fx.client.send("PUT", "/api/im/blocks/u_nobody", headers: auth).code == 1103)
            #expect(try await fx.client.send("PUT", "/api/im/blocks/\(carol.userId)", headers: auth).status == 201)
            #expect(try await fx.client.send("PUT", "/api/im/blocks/\(bob.userId)", headers: auth).code == 1128)
            #expect(try await Self.count(fx, "SELECT count(*) FROM user_blocks") == 1)
            #expect(try await fx.client.get("/api/im/blocks?cursor=nonsense", token: alice.accessToken).code == 1002)
        }
    }

    @Test func theFriendListPagesWithoutGapsAndSyncsIncrementally() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(1)
            let owner = users[0]
            // 230 friends written straight to the tables (the REST path is covered above).
            _ = try await fx.database.query(
                .init(
                    unsafeSQL: """
                        INSERT INTO users (app_id, id, nickname)
                        SELECT \(fx.appId), 'f_' || lpad(n::text, 4, '0'), 'Friend ' || n FROM generate_series(1, 230) n;
                        """))
            _ = try await fx.database.query(
                .init(
                    unsafeSQL: """
                        INSERT INTO friendships (app_id, user_id, friend_id)
                        SELECT \(fx.appId), \(Self.quoted(owner.userId)), 'f_' || lpad(n::text, 4, '0')
                        FROM generate_series(1, 230) n
                        UNION ALL
                        SELECT \(fx.appId), 'f_' || lpad(n::text, 4, '0'), \(Self.quoted(owner.userId))
                        FROM generate_series(1, 230) n;
                        """))
            var seen: [String] = []
            var cursor: String?
            for _ in 0..<10 {
                let target = "/api/im/friends?limit=100" + (cursor.map { "&since=\($0)" } ?? "")
                let page = try await fx.client.get(target, token: owner.accessToken)
                seen += (page.data["friends"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String }
                cursor = page.string("cursor")
                if page.data["hasMore"] as? Bool != true { break }
            }
            #expect(seen.count == 230 && Set(seen).count == 230 && seen == seen.sorted())
            // After the listing: nothing new; then one removal and one remark arrive as changes.
            let since = try #require(cursor)
            _ = try await fx.client.delete("/api/im/friends/f_0007", token: owner.accessToken)
            _ = try await fx.client.patch("/api/im/friends/f_0009", json: ["remark": "nine"], token: owner.accessToken)
            let changes = try await Self.friendChanges(fx, owner, since: since) { changes in
                !changes.removed.isEmpty && changes.friends.contains { $0["remark"] as? String == "nine" }
            }
            #expect(changes.removed == ["f_0007"])
            #expect(changes.friends.filter { $0["remark"] as? String == "nine" }.count == 1)
        }
    }

    /// Incremental friend-list reads from `since` (every page), repeated until `done`: a change is visible once every
    /// transaction that started before it ended, anywhere on the cluster (other tests run alongside).
    static func friendChanges(
        _ fx: MessagingFixture, _ session: Session, since: String,
        until done: ((friends: [[String: Any]], removed: [String])) -> Bool
    ) async throws -> (friends: [[String: Any]], removed: [String]) {
        var friends: [[String: Any]] = []
        var removed: [String] = []
        var cursor = since
        for _ in 0..<500 {
            let page = try await fx.client.get("/api/im/friends?since=\(cursor)", token: session.accessToken)
            friends += page.data["friends"] as? [[String: Any]] ?? []
            removed += page.data["removed"] as? [String] ?? []
            cursor = try #require(page.string("cursor"))
            if page.data["hasMore"] as? Bool == true { continue }
            if done((friends, removed)) { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        return (friends, removed)
    }

    static func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
}
