import Foundation
import ParleyLiveSupport
import ParleyPostgres
import Testing

/// The seed clients' messaging wire (issue 17): every message decodes into seed 001's `ImMessage`, content may be
/// sent as a string, sends without a clientMsgId, revoke by clientMsgId, one message by id, and history paged by
/// time and in either order.
@Suite("Seed messaging wire", .serialized)
struct SeedWireTests {
    /// 001's `SendMessageParams(toId, chatType, msgType, content)`: no clientMsgId, content a String.
    @Test func aSeedSendDecodesEverywhere() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let cursor = try await fx.sync(bob, cursor: nil).cursor
            let key = try await fx.uploadKey(alice)
            let document = #"{"objectKey":"\#(key)","width":16,"height":9}"#
            let image = try await fx.send(
                alice, to: bob.userId, msgType: "image", content: document, extra: "plain extra", clientMsgId: nil)
            #expect(image.status == 201)
            let sent = try SeedImMessage.decode(image.data)
            #expect(sent.msgType == .image && sent.content == document && sent.extra == "plain extra")
            #expect(image.data["clientMsgId"] is NSNull && sent.editedAt == nil)

            // Without a clientMsgId nothing is deduplicated: the same body stores a second message.
            let text = try await fx.send(alice, to: bob.userId, content: "hi", extra: ["k": 1], clientMsgId: nil)
            let again = try await fx.send(alice, to: bob.userId, content: "hi", extra: ["k": 1], clientMsgId: nil)
            #expect(text.status == 201 && again.status == 201)
            #expect(text.data["id"] as? String != again.data["id"] as? String)
            #expect(try SeedImMessage.decode(text.data).extra == #"{"k":1}"#)

            // A custom content: a JSON object in a string is stored as JSON, any other string as the string.
            let custom = try await fx.send(
                alice, to: bob.userId, msgType: "custom", content: #"{"type":"audio","duration_sec":3}"#)
            #expect(try SeedImMessage.decode(custom.data).content == #"{"type":"audio","duration_sec":3}"#)
            let stored = try await fx.database.query(
                "SELECT content FROM messages WHERE id = \(Int64(custom.string("id") ?? "0") ?? 0)")
            #expect(try stored[0].decode("content", as: String.self) == #"{"type":"audio","duration_sec":3}"#)
            let word = try await fx.send(alice, to: bob.userId, msgType: "custom", content: "just words")
            #expect(try SeedImMessage.decode(word.data).content == "just words")

            // Edited and revoked: editedAt in epoch milliseconds, content "" once revoked.
            let textID = try #require(text.string("id"))
            let edited = try await fx.client.patch(
                "/api/im/messages/\(textID)", json: ["content": "hi!"], token: alice.accessToken)
            let editedAt = try #require(try SeedImMessage.decode(edited.data).editedAt)
            #expect(abs(Double(editedAt) / 1000 - Date().timeIntervalSince1970) < 60)
            let revoked = try await fx.client.post(
                "/api/im/messages/\(try #require(again.string("id")))/revoke", token: alice.accessToken)
            let revokedMessage = try SeedImMessage.decode(revoked.data)
            #expect(revokedMessage.revoked && revokedMessage.content == "" && revokedMessage.extra == nil)

            // History, one message by id, sync: the same decoder reads them all.
            let conversationId = MessagingFixture.singleID(alice, bob)
            let history = try await fx.history(bob, conversationId)
            let messages = try (history.data["messages"] as? [Any] ?? []).map(SeedImMessage.decode)
            #expect(messages.map(\.msgType) == [.image, .text, .text, .custom, .custom])
            #expect(messages.first?.content == document)
            let one = try await fx.client.get("/api/im/messages/\(sent.id)", token: bob.accessToken)
            #expect(try SeedImMessage.decode(one.data).content == document)
            let changes = try await fx.syncUntil(bob, from: cursor, count: 7).changes
            let synced = try changes.compactMap { $0["message"] }.map(SeedImMessage.decode)
            // Five messages and the edit carry a message (the revoke entry names it by id).
            #expect(synced.count == 6, "\(changes.map { $0["type"] ?? "" })")
            #expect(synced.contains { $0.editedAt == editedAt })
        }
    }

    /// Bad content text is refused naming `content`, and nothing is stored half-way.
    @Test func contentTextThatIsNoDocumentIsRefused() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let before = try await fx.messageCount()
            for (type, content) in [
                ("image", #"{"objectKey":"k","width":16"#), ("image", "not json"), ("location", ""),
                ("image", #"{"objectKey":"k","width":16}"#), ("file", "[1,2]"),
            ] {
                let response = try await fx.send(users[0], to: users[1].userId, msgType: type, content: content)
                #expect(response.status == 400 && response.code == 1002, "\(type) \(content)")
                #expect(response.message?.contains("content") == true, "\(response.text)")
            }
            #expect(try await fx.messageCount() == before)
        }
    }

    /// Seed 000's `revokeMessage(conversationID:clientMsgID:)`: only the caller's own id in that conversation.
    @Test func revokeByClientMsgId() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let conversationId = MessagingFixture.singleID(alice, bob)
            let mine = try await fx.sendOK(alice, to: bob.userId, content: "oops", clientMsgId: "c-oops")
            let bobs = try await fx.sendOK(bob, to: alice.userId, content: "bob's", clientMsgId: "c-bob")
            let elsewhere = try await fx.sendOK(alice, to: carol.userId, content: "to carol", clientMsgId: "c-carol")
            func revoke(_ session: Session, _ body: [String: Any]) async throws -> TestResponse {
                try await fx.client.post("/api/im/messages/revoke", json: body, token: session.accessToken)
            }
            // Unknown, another user's (even in a conversation the caller is in), another conversation's: 1102.
            for (session, clientMsgId, conversation) in [
                (alice, "c-unknown", conversationId), (alice, "c-bob", conversationId),
                (alice, "c-carol", conversationId), (carol, "c-oops", conversationId),
            ] {
                let refused = try await revoke(session, ["conversationId": conversation, "clientMsgId": clientMsgId])
                #expect(refused.status == 404 && refused.code == 1102, "\(clientMsgId): \(refused.text)")
                #expect(refused.data.isEmpty)
            }
            for bad: [String: Any] in [
                [:], ["conversationId": conversationId], ["clientMsgId": "c-oops"],
                ["conversationId": "nonsense", "clientMsgId": "c-oops"],
                ["conversationId": conversationId, "clientMsgId": ""], ["msgId": "x1"], ["msgId": true],
            ] {
                #expect(try await revoke(alice, bad).code == 1002, "\(bad)")
            }
            let revoked = try await revoke(alice, ["conversationId": conversationId, "clientMsgId": "c-oops"])
            #expect(revoked.status == 200 && revoked.string("id") == mine["id"] as? String)
            #expect(try SeedImMessage.decode(revoked.data).revoked)
            // Bob's and the other conversation's messages are untouched.
            for (session, id) in [(bob, bobs["id"]), (alice, elsewhere["id"])] {
                let shown = try await fx.client.get(
                    "/api/im/messages/\(id as? String ?? "")", token: session.accessToken)
                #expect(shown.data["revoked"] as? Bool == false)
            }
            // `{msgId}` still works in the same route.
            let byId = try await revoke(bob, ["msgId": bobs["id"] as? String ?? ""])
            #expect(byId.status == 200 && byId.data["revoked"] as? Bool == true)
        }
    }

    /// `GET /api/im/messages/{id}`: members only; anyone else gets what a missing id gets.
    @Test func oneMessageByIdForMembersOnly() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, mallory) = (users[0], users[1], users[2])
            let message = try await fx.sendOK(alice, to: bob.userId, content: "private")
            let id = try #require(message["id"] as? String)
            #expect(try await fx.client.get("/api/im/messages/\(id)", token: bob.accessToken).string("id") == id)
            let stranger = try await fx.client.get("/api/im/messages/\(id)", token: mallory.accessToken)
            let missing = try await fx.client.get("/api/im/messages/999999999", token: mallory.accessToken)
            #expect(stranger.status == 404 && stranger.code == 1102)
            #expect(stranger.status == missing.status && stranger.text == missing.text)
            #expect(try await fx.client.get("/api/im/messages/abc", token: bob.accessToken).code == 1002)
            // Cleared away for bob: gone for him too, as in history.
            _ = try await fx.client.post(
                "/api/im/conversations/\(MessagingFixture.singleID(alice, bob))/clear", token: bob.accessToken)
            #expect(try await fx.client.get("/api/im/messages/\(id)", token: bob.accessToken).code == 1102)
            #expect(try await fx.client.get("/api/im/messages/\(id)", token: alice.accessToken).status == 200)
        }
    }

    /// Seed 000's summaries: `peerReadSeq` (1:1), `latestMessage` (the ImMessage wire), and the list's
    /// `totalUnread` over every visible conversation, muted ones included, whatever the page.
    @Test func summariesCarryReadPointsTheLatestMessageAndTotalUnread() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            for n in 1...2 { try await fx.sendOK(alice, to: bob.userId, content: "a\(n)") }
            for n in 1...3 { try await fx.sendOK(carol, to: bob.userId, content: "c\(n)") }
            let group = try await fx.createGroup(carol, members: [bob])
            try await fx.sendOK(carol, to: group.groupId, chatType: "group", content: "g1")
            let withCarol = MessagingFixture.singleID(bob, carol)
            #expect(
                try await fx.client.patch(
                    "/api/im/conversations/\(withCarol)", json: ["muted": true], token: bob.accessToken
                ).status == 200)
            func page(_ query: String) async throws -> (list: [[String: Any]], total: Int?) {
                let response = try await fx.client.get("/api/im/conversations\(query)", token: bob.accessToken)
                return (response.data["conversations"] as? [[String: Any]] ?? [], response.data["totalUnread"] as? Int)
            }
            let all = try await page("")
            #expect(all.total == 6 && all.list.count == 3)
            let first = try await page("?limit=1")
            #expect(first.list.count == 1 && first.total == 6)
            let past = try await page("?offset=50")
            #expect(past.list.isEmpty && past.total == 6)
            let withAlice = try #require(all.list.first { $0["peerUserId"] as? String == alice.userId })
            #expect(withAlice["peerReadSeq"] as? Int == 2 && withAlice["unreadCount"] as? Int == 2)
            #expect(try SeedImMessage.decode(withAlice["latestMessage"]).content == "a2")
            let inGroup = try #require(all.list.first { $0["groupId"] as? String == group.groupId })
            #expect(inGroup["peerReadSeq"] == nil && inGroup["unreadCount"] as? Int == 1)
            #expect(try SeedImMessage.decode(inGroup["latestMessage"]).content == "g1")
            // Alice sees bob's read point once he reads; a cleared conversation has no latest message.
            _ = try await fx.client.post(
                "/api/im/conversations/\(MessagingFixture.singleID(alice, bob))/read", json: ["seq": 1],
                token: bob.accessToken)
            #expect(
                try await fx.conversation(alice, MessagingFixture.singleID(alice, bob))?["peerReadSeq"] as? Int == 1)
            _ = try await fx.client.post("/api/im/conversations/\(withCarol)/clear", token: bob.accessToken)
            let cleared = try await fx.client.get("/api/im/conversations/\(withCarol)", token: bob.accessToken)
            #expect(cleared.data["latestMessage"] is NSNull && cleared.data["unreadCount"] as? Int == 0)
            #expect(try await page("").total == 2)
            // A user with no conversation: nothing unread.
            let empty = try await fx.users(1, prefix: "lonely")
            let none = try await fx.client.get("/api/im/conversations", token: empty[0].accessToken)
            #expect(none.data["totalUnread"] as? Int == 0 && (none.data["conversations"] as? [Any])?.isEmpty == true)
        }
    }

    /// Seed 002 pages RTM-style: `order=desc`, a `begin`/`end` window in epoch milliseconds, `hasMore`.
    @Test func historyByTimeAndOrder() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let conversationId = MessagingFixture.singleID(alice, bob)
            for n in 1...10 { try await fx.sendOK(alice, to: bob.userId, content: "m\(n)") }
            // Spread the messages one minute apart (times never go backwards within a conversation).
            let base: Int64 = 1_800_000_000_000
            _ = try await fx.database.query(
                """
                UPDATE messages SET created_at = timestamptz 'epoch' + (\(base) + (seq - 1) * 60000) * interval '1 ms'
                WHERE conversation_id = \(conversationId)
                """)
            func seqs(_ query: String) async throws -> (seqs: [Int], hasMore: Bool) {
                let response = try await fx.history(bob, conversationId, query: query)
                guard response.status == 200 else { throw TestFailure("\(query): \(response.text)") }
                let messages = response.data["messages"] as? [[String: Any]] ?? []
                return (messages.compactMap { $0["seq"] as? Int }, response.data["hasMore"] as? Bool ?? false)
            }
            let minute: Int64 = 60000
            #expect(try await seqs("?limit=3") == ([8, 9, 10], true))
            #expect(try await seqs("?limit=3&order=desc") == ([10, 9, 8], true))
            #expect(try await seqs("?limit=3&order=desc&before=8") == ([7, 6, 5], true))
            #expect(try await seqs("?limit=3&order=asc") == ([1, 2, 3], true))
            #expect(try await seqs("?limit=3&after=8&order=desc") == ([10, 9], false))
            // The window is inclusive at both ends, to the millisecond.
            let window = "begin=\(base + 2 * minute)&end=\(base + 5 * minute)"
            #expect(try await seqs("?\(window)") == ([3, 4, 5, 6], false))
            #expect(try await seqs("?\(window)&order=desc&limit=2") == ([6, 5], true))
            #expect(try await seqs("?\(window)&order=desc&limit=2&before=5") == ([4, 3], false))
            #expect(try await seqs("?\(window)&order=asc&limit=3") == ([3, 4, 5], true))
            #expect(try await seqs("?begin=\(base + 2 * minute + 1)&end=\(base + 5 * minute - 1)") == ([4, 5], false))
            #expect(try await seqs("?begin=\(base + 9 * minute)&end=0") == ([10], false))
            // RTM's first call: lastid 0 (before=0) and end=0 are no bounds: the newest page.
            #expect(try await seqs("?limit=3&order=desc&before=0&begin=0&end=0") == ([10, 9, 8], true))
            #expect(try await seqs("?end=\(base)") == ([1], false))
            #expect(try await seqs("?begin=\(base + 60 * minute)") == ([], false))
            // Bad values and combinations: 1002 naming the parameter.
            for (query, field) in [
                ("?begin=\(base + minute)&end=\(base)", "begin"), ("?begin=yesterday", "begin"),
                ("?end=1.5", "end"), ("?begin=-1", "begin"), ("?order=newest", "order"),
                ("?before=3&after=1", "before"), ("?end=999999999999999999", "end"), ("?before=-1", "before"),
            ] {
                let response = try await fx.history(bob, conversationId, query: query)
                #expect(
                    response.code == 1002 && response.message?.contains(field) == true, "\(query): \(response.text)")
            }
        }
    }

    /// The time bound is found by a binary search over seq: a plan with no scan of the conversation.
    @Test func aTimeBoundIsAnIndexRange() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            for n in 1...5 { try await fx.sendOK(users[0], to: users[1].userId, content: "m\(n)") }
            let conversationId = MessagingFixture.singleID(users[0], users[1])
            let appId = fx.appId
            // A handful of rows makes any plan cheap: rule out the sequential scan to see whether the bound itself
            // can drive the index (a seq bound the index cannot use would show as a Filter, not an Index Cond).
            let plan = try await fx.database.withTransaction { connection in
                _ = try await connection.query("SET LOCAL enable_seqscan = off")
                return try await connection.query(
                    """
                    EXPLAIN SELECT id FROM messages WHERE app_id = \(appId) AND conversation_id = \(conversationId)
                      AND seq > greatest(0, NULL::bigint, parley_first_seq_at(\(appId), \(conversationId), now()) - 1)
                      AND seq < least(NULL::bigint, 9223372036854775807) ORDER BY seq DESC LIMIT 11
                    """
                ).map { try $0.decode("QUERY PLAN", as: String.self) }.joined(separator: "\n")
            }
            #expect(plan.contains("messages_seq") && plan.contains("Index Cond") && plan.contains("seq >"), "\(plan)")
        }
    }
}
