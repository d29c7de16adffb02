import Foundation
import ParleyLiveSupport
import Testing

/// What members do with messages besides sending them (issue 22): reactions, pins, delete for me, mark unread.
@Suite("Message interactions", .serialized)
struct InteractionTests {
    static let thumbsUp = "%F0%9F%91%8D" // 👍, percent-encoded in the path
    static let heart = "%E2%9D%A4%EF%B8%8F" // ❤️ (with its variation selector)

    func put(_ fx: MessagingFixture, _ target: String, _ session: Session) async throws -> TestResponse {
        try await fx.client.send("PUT", target, headers: ["Authorization": "Bearer \(session.accessToken)"])
    }

    func reactions(_ response: TestResponse) -> [[String: Any]] {
        response.data["reactions"] as? [[String: Any]] ?? []
    }

    func changes(_ all: [[String: Any]], type: String) -> [[String: Any]] {
        all.filter { $0["type"] as? String == type }
    }

    @Test func reactionsAreCountedWithMineAndReachTheOtherMemberThroughSync() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, stranger) = (users[0], users[1], users[2])
            let conversationId = MessagingFixture.singleID(alice, bob)
            let sent = try await fx.sendOK(alice, to: bob.userId, content: "lunch?")
            let id = try #require(sent["id"] as? String)
            let start = try await fx.sync(alice, cursor: nil)

            let added = try await put(fx, "/api/im/messages/\(id)/reactions/\(Self.thumbsUp)", bob)
            #expect(added.status == 200)
            #expect(added.string("conversationId") == conversationId && added.string("msgId") == id)
            #expect(reactions(added).count == 1)
            #expect(reactions(added).first?["emoji"] as? String == "👍")
            #expect(reactions(added).first?["count"] as? Int == 1 && reactions(added).first?["me"] as? Bool == true)
            // Again: the same answer, no second change.
            let again = try await put(fx, "/api/im/messages/\(id)/reactions/\(Self.thumbsUp)", bob)
            #expect(again.status == 200 && reactions(again).first?["count"] as? Int == 1)
            #expect(try await put(fx, "/api/im/messages/\(id)/reactions/\(Self.thumbsUp)", alice).status == 200)
            #expect(try await put(fx, "/api/im/messages/\(id)/reactions/\(Self.heart)", alice).status == 200)

            // History shows the counts, with `me` as each reader sees it; emojis in the order they first appeared.
            let history = try await fx.history(alice, conversationId)
            let message = try #require((history.data["messages"] as? [[String: Any]])?.first)
            let shown = message["reactions"] as? [[String: Any]] ?? []
            #expect(shown.map { $0["emoji"] as? String } == ["👍", "❤️"])
            #expect(shown.map { $0["count"] as? Int } == [2, 1])
            #expect(shown.map { $0["me"] as? Bool } == [true, true])
            let byId = try await fx.client.get("/api/im/messages/\(id)", token: bob.accessToken)
            #expect((byId.data["reactions"] as? [[String: Any]])?.map { $0["me"] as? Bool } == [true, false])

            // The other member replays every change through sync; a change repeated is not recorded twice.
            let synced = try await fx.syncUntil(alice, from: start.cursor) {
                changes($0, type: "reaction").count >= 3
            }
            let replayed = changes(synced.changes, type: "reaction")
            #expect(replayed.count == 3)
            #expect(replayed.first?["userId"] as? String == bob.userId)
            #expect(replayed.first?["action"] as? String == "added" && replayed.first?["msgId"] as? String == id)

            let removed = try await fx.client.delete(
                "/api/im/messages/\(id)/reactions/\(Self.thumbsUp)", token: bob.accessToken)
            #expect(removed.status == 200)
            #expect(reactions(removed).map { $0["count"] as? Int } == [1, 1])
            #expect(reactions(removed).map { $0["me"] as? Bool } == [false, false])
            let after = try await fx.syncUntil(alice, from: synced.cursor) {
                changes($0, type: "reaction").count >= 1
            }
            #expect(changes(after.changes, type: "reaction").first?["action"] as? String == "removed")

            // Bad input and outsiders.
            #expect(try await put(fx, "/api/im/messages/\(id)/reactions/\(Self.thumbsUp)", stranger).code == 1102)
            #expect(try await put(fx, "/api/im/messages/999999999/reactions/x", alice).code == 1102)
            let tooLong = String(repeating: "a", count: 17)
            #expect(try await put(fx, "/api/im/messages/\(id)/reactions/\(tooLong)", alice).code == 1002)
            #expect(try await put(fx, "/api/im/messages/\(id)/reactions/a%20b", alice).code == 1002)
            #expect(try await put(fx, "/api/im/messages/\(id)/reactions/%07", alice).code == 1002)
            #expect(try await put(fx, "/api/im/messages/\(id)/reactions/%2E%2E", alice).code == 1002)
            let family = "%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7" // 👨‍👩‍👧: five scalars
            #expect(try await put(fx, "/api/im/messages/\(id)/reactions/\(family)", alice).status == 200)
            #expect(try await put(fx, "/api/im/messages/abc/reactions/x", alice).code == 1002)
            #expect(try await fx.client.send("PUT", "/api/im/messages/\(id)/reactions/x").status == 401)

            // A revoked message takes no new reaction.
            #expect(try await fx.client.post("/api/im/messages/\(id)/revoke", token: alice.accessToken).status == 200)
            #expect(try await put(fx, "/api/im/messages/\(id)/reactions/x", bob).code == 1115)
        }
    }

    @Test func aUserPutsAtMostTwentyReactionsOnOneMessage() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let id = try #require(try await fx.sendOK(users[0], to: users[1].userId)["id"] as? String)
            for index in 0..<20 {
                #expect(try await put(fx, "/api/im/messages/\(id)/reactions/r\(index)", users[1]).status == 200)
            }
            let refused = try await put(fx, "/api/im/messages/\(id)/reactions/r20", users[1])
            #expect(refused.status == 409 && refused.code == 1141)
            // Nothing half-stored: still twenty, and the other user may still react.
            let shown = try await fx.client.get("/api/im/messages/\(id)", token: users[0].accessToken)
            #expect((shown.data["reactions"] as? [[String: Any]])?.count == 20)
            #expect(try await put(fx, "/api/im/messages/\(id)/reactions/r0", users[0]).status == 200)
        }
    }

    @Test func managersPinMessagesAndMembersSeeTheListLiveAndThroughSync() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (owner, member, stranger) = (users[0], users[1], users[2])
            let group = try await fx.createGroup(owner, name: "Pins", members: [member])
            let first = try #require(
                try await fx.sendOK(member, to: group.groupId, chatType: "group", content: "rules")["id"] as? String)
            let second = try #require(
                try await fx.sendOK(owner, to: group.groupId, chatType: "group", content: "agenda")["id"] as? String)
            let start = try await fx.sync(member, cursor: nil)

            let refused = try await put(fx, "/api/im/messages/\(first)/pin", member)
            #expect(refused.status == 403 && refused.code == 1112)
            #expect(try await put(fx, "/api/im/messages/\(first)/pin", stranger).code == 1102)
            let pinned = try await put(fx, "/api/im/messages/\(first)/pin", owner)
            #expect(pinned.status == 200 && pinned.data["pinned"] as? Bool == true)
            #expect(pinned.string("pinnedBy") == owner.userId && pinned.string("pinnedAt") != nil)
            #expect(try await put(fx, "/api/im/messages/\(second)/pin", owner).status == 200)
            #expect(try await put(fx, "/api/im/messages/\(second)/pin", owner).status == 200)

            let list = try await fx.client.get(
                "/api/im/conversations/\(group.conversationId)/pins", token: member.accessToken)
            #expect(list.status == 200)
            let pins = list.data["pins"] as? [[String: Any]] ?? []
            #expect(pins.compactMap { ($0["message"] as? [String: Any])?["id"] as? String } == [second, first])
            #expect(pins.first?["pinnedBy"] as? String == owner.userId)
            #expect(
                try await fx.client.get(
                    "/api/im/conversations/\(group.conversationId)/pins", token: stranger.accessToken
                )
                .code == 1101)

            let unpinned = try await fx.client.delete("/api/im/messages/\(first)/pin", token: owner.accessToken)
            #expect(unpinned.status == 200 && unpinned.data["pinned"] as? Bool == false)
            let synced = try await fx.syncUntil(member, from: start.cursor) {
                changes($0, type: "message_unpinned").count >= 1
            }
            #expect(
                changes(synced.changes, type: "message_pinned").compactMap { $0["msgId"] as? String } == [
                    first, second,
                ])
            #expect(changes(synced.changes, type: "message_unpinned").first?["operatorId"] as? String == owner.userId)
            let after = try await fx.client.get(
                "/api/im/conversations/\(group.conversationId)/pins", token: owner.accessToken)
            #expect((after.data["pins"] as? [[String: Any]])?.count == 1)
        }
    }

    @Test func aConversationHoldsAtMostAHundredPins() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            var ids: [String] = []
            for index in 0..<101 {
                ids.append(
                    try #require(
                        try await fx.sendOK(users[0], to: users[1].userId, content: "m\(index)")["id"] as? String))
            }
            for id in ids.prefix(100) {
                #expect(try await put(fx, "/api/im/messages/\(id)/pin", users[1]).status == 200)
            }
            let refused = try await put(fx, "/api/im/messages/\(ids[100])/pin", users[0])
            #expect(refused.status == 409 && refused.code == 1142)
            let list = try await fx.client.get(
                "/api/im/conversations/\(MessagingFixture.singleID(users[0], users[1]))/pins",
                token: users[0].accessToken)
            #expect((list.data["pins"] as? [[String: Any]])?.count == 100)
        }
    }

    @Test func aMessageDeletedForMeLeavesOnlyMyHistory() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let conversationId = MessagingFixture.singleID(alice, bob)
            let kept = try #require(try await fx.sendOK(alice, to: bob.userId, content: "keep")["id"] as? String)
            let gone = try #require(
                try await fx.sendOK(bob, to: alice.userId, content: "secret words")["id"] as? String)
            let start = try await fx.sync(alice, cursor: nil)

            let deleted = try await fx.client.delete("/api/im/messages/\(gone)", token: alice.accessToken)
            #expect(deleted.status == 200 && deleted.string("msgId") == gone)
            #expect(deleted.string("conversationId") == conversationId)
            // Mine: gone from history, by id and from search; again answers 1102 as for a message that does not exist.
            let mine = try await fx.history(alice, conversationId)
            #expect((mine.data["messages"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [kept])
            #expect(try await fx.client.get("/api/im/messages/\(gone)", token: alice.accessToken).code == 1102)
            #expect(try await fx.client.delete("/api/im/messages/\(gone)", token: alice.accessToken).code == 1102)
            try await fx.live.app.messaging.searchIndexer.drain()
            let search = try await fx.client.get("/api/im/search?q=secret", token: alice.accessToken)
            #expect((search.data["messages"] as? [[String: Any]])?.isEmpty == true)
            // Theirs: still there.
            let theirs = try await fx.history(bob, conversationId)
            #expect((theirs.data["messages"] as? [[String: Any]])?.count == 2)
            let found = try await fx.client.get("/api/im/search?q=secret", token: bob.accessToken)
            #expect((found.data["messages"] as? [[String: Any]])?.count == 1)
            // My other devices learn it through sync.
            let synced = try await fx.syncUntil(alice, from: start.cursor) {
                changes($0, type: "message_deleted").count >= 1
            }
            #expect(changes(synced.changes, type: "message_deleted").first?["msgId"] as? String == gone)
            #expect(try await fx.client.delete("/api/im/messages/x1", token: alice.accessToken).code == 1002)
        }
    }

    @Test func aConversationMarkedUnreadStaysSoUntilTheNextReadMark() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob) = (users[0], users[1])
            let conversationId = MessagingFixture.singleID(alice, bob)
            try await fx.sendOK(bob, to: alice.userId)
            #expect(try await fx.conversation(alice, conversationId)?["markedUnread"] as? Bool == false)
            let start = try await fx.sync(alice, cursor: nil)

            let marked = try await fx.client.post(
                "/api/im/conversations/\(conversationId)/unread", token: alice.accessToken)
            #expect(marked.status == 200 && marked.data["markedUnread"] as? Bool == true)
            #expect(try await fx.conversation(alice, conversationId)?["markedUnread"] as? Bool == true)
            #expect(try await fx.conversation(bob, conversationId)?["markedUnread"] as? Bool == false)
            let synced = try await fx.syncUntil(alice, from: start.cursor) {
                changes($0, type: "conversation").contains { $0["markedUnread"] as? Bool == true }
            }
            #expect(
                changes(synced.changes, type: "conversation").contains {
                    $0["conversationId"] as? String == conversationId
                })

            // A read mark clears it, even one that does not move the read point.
            let read = try await fx.client.post(
                "/api/im/conversations/\(conversationId)/read", json: ["seq": 0], token: alice.accessToken)
            #expect(read.status == 200 && read.data["markedUnread"] as? Bool == false)
            #expect(
                try await fx.client.post("/api/im/conversations/\(conversationId)/unread", token: users[2].accessToken)
                    .code == 1101)
            #expect(try await fx.client.post("/api/im/conversations/bad/unread", token: alice.accessToken).code == 1002)
        }
    }
}
