import Foundation
import ParleyLiveSupport
import Testing

/// Unread counts, previews, pin, draft, mute, clear and delete: each user's own view.
@Suite("Conversation state", .serialized)
struct ConversationStateTests {
    @Test func unreadCountsAndPreviewsFollowSendReadRevokeAndClear() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let id = MessagingFixture.singleID(alice, bob)
            var ids: [String] = []
            for text in ["one", "two", "  three\nlines  "] {
                ids.append(try await fx.sendOK(alice, to: bob.userId, content: text)["id"] as! String)
            }
            var bobView = try #require(try await fx.conversation(bob, id))
            #expect(bobView["unreadCount"] as? Int == 3)
            #expect(bobView["lastMessagePreview"] as? String == "three lines")
            #expect(bobView["chatType"] as? String == "single")
            #expect(bobView["peerUserId"] as? String == alice.userId)
            #expect(bobView["showName"] as? String == "user0")
            // The sender has nothing unread.
            #expect(try await fx.conversation(alice, id)?["unreadCount"] as? Int == 0)

            // Read up to seq 2: one left.
            let read = try await fx.client.post(
                "/api/im/conversations/\(id)/read", json: ["seq": 2], token: bob.accessToken)
            #expect(read.status == 200)
            #expect(read.data["unreadCount"] as? Int == 1)
            #expect(read.data["readSeq"] as? Int == 2)
            // Reading backwards does not move the read point.
            #expect(
                try await fx.client.post(
                    "/api/im/conversations/\(id)/read", json: ["seq": 1],
                    token: bob.accessToken
                ).data["readSeq"] as? Int == 2)

            // Revoking the unread last message: nothing unread, preview says so.
            #expect(
                try await fx.client.post("/api/im/messages/\(ids[2])/revoke", token: alice.accessToken).status == 200)
            bobView = try #require(try await fx.conversation(bob, id))
            #expect(bobView["unreadCount"] as? Int == 0)
            #expect(bobView["lastMessagePreview"] as? String == "message revoked")

            // Typed previews.
            try await fx.sendOK(
                alice, to: bob.userId, msgType: "image",
                content: ["objectKey": try await fx.uploadKey(alice), "width": 1, "height": 1])
            #expect(try await fx.conversation(bob, id)?["lastMessagePreview"] as? String == "[image]")
            try await fx.sendOK(
                alice, to: bob.userId, msgType: "audio",
                content: ["objectKey": try await fx.uploadKey(alice), "durationSec": 3])
            bobView = try #require(try await fx.conversation(bob, id))
            #expect(bobView["lastMessagePreview"] as? String == "[voice]")
            #expect(bobView["unreadCount"] as? Int == 2)
            // Revoking an already-read message does not change the count.
            #expect(
                try await fx.client.post("/api/im/messages/\(ids[0])/revoke", token: alice.accessToken).status == 200)
            #expect(try await fx.conversation(bob, id)?["unreadCount"] as? Int == 2)

            // Bob replies: sending reads everything before it.
            try await fx.sendOK(
                bob, to: alice.userId, msgType: "file",
                content: ["objectKey": try await fx.uploadKey(bob), "name": "a.pdf", "size": 10])
            bobView = try #require(try await fx.conversation(bob, id))
            #expect(bobView["unreadCount"] as? Int == 0)
            #expect(bobView["lastMessagePreview"] as? String == "[file]")
            #expect(try await fx.conversation(alice, id)?["unreadCount"] as? Int == 1)

            // Alice clears: her history and unread go, Bob's stay.
            let cleared = try await fx.client.post("/api/im/conversations/\(id)/clear", token: alice.accessToken)
            #expect(cleared.status == 200)
            let aliceView = try #require(try await fx.conversation(alice, id))
            #expect(aliceView["unreadCount"] as? Int == 0)
            #expect(aliceView["lastMessagePreview"] as? String == "")
            #expect(try await fx.historySeqs(alice, id).isEmpty)
            #expect(try await fx.historySeqs(bob, id) == [1, 2, 3, 4, 5, 6])
            // New messages after the clear show up for Alice, and only those.
            try await fx.sendOK(bob, to: alice.userId, content: "after")
            #expect(try await fx.historySeqs(alice, id) == [7])
            #expect(try await fx.conversation(alice, id)?["unreadCount"] as? Int == 1)
            #expect(try await fx.conversation(alice, id)?["lastMessagePreview"] as? String == "after")
        }
    }

    /// A third user gets the same 404 (1101) for two others' conversation as for one that does not exist, on every
    /// route that takes a conversation id: nothing tells who talks to whom.
    @Test func outsidersCannotTellAConversationExists() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, eve) = (users[0], users[1], users[2])
            try await fx.sendOK(alice, to: bob.userId)
            let real = MessagingFixture.singleID(alice, bob)
            let ghost = "si:\(alice.userId):zz_nobody" // well formed, never used
            for id in [real, ghost] {
                let answers = [
                    try await fx.client.get("/api/im/conversations/\(id)", token: eve.accessToken),
                    try await fx.client.patch(
                        "/api/im/conversations/\(id)", json: ["isPinned": true], token: eve.accessToken),
                    try await fx.client.delete("/api/im/conversations/\(id)", token: eve.accessToken),
                    try await fx.client.post(
                        "/api/im/conversations/\(id)/read", json: ["seq": 1], token: eve.accessToken),
                    try await fx.client.post("/api/im/conversations/\(id)/clear", token: eve.accessToken),
                    try await fx.history(eve, id),
                ]
                for answer in answers {
                    #expect(answer.status == 404 && answer.code == 1101, "\(id): \(answer.text)")
                    #expect(answer.message == "no such conversation")
                }
            }
            // Nothing of theirs changed.
            #expect(try await fx.conversation(bob, real)?["unreadCount"] as? Int == 1)
        }
    }

    @Test func deleteHidesForTheCallerUntilTheNextMessage() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let (alice, bob) = (users[0], users[1])
            let id = MessagingFixture.singleID(alice, bob)
            try await fx.sendOK(alice, to: bob.userId, content: "hi")
            try await fx.sendOK(bob, to: alice.userId, content: "hey")
            #expect(
                try await fx.client.patch(
                    "/api/im/conversations/\(id)", json: ["isPinned": true, "draftText": "dr"],
                    token: bob.accessToken
                ).status == 200)
            let deleted = try await fx.client.delete("/api/im/conversations/\(id)", token: bob.accessToken)
            #expect(deleted.status == 200)
            #expect(try await fx.conversation(bob, id) == nil)
            #expect(try await fx.conversation(alice, id) != nil)
            #expect(try await fx.historySeqs(alice, id) == [1, 2])
            #expect(try await fx.historySeqs(bob, id).isEmpty)
            // A new message brings it back, without the old history, pin or draft.
            try await fx.sendOK(alice, to: bob.userId, content: "back")
            let back = try #require(try await fx.conversation(bob, id))
            #expect(back["unreadCount"] as? Int == 1)
            #expect(back["isPinned"] as? Bool == false)
            #expect(back["draftText"] as? String == "")
            #expect(back["lastMessagePreview"] as? String == "back")
            #expect(try await fx.historySeqs(bob, id) == [3])
        }
    }

    @Test func pinDraftMuteAndListOrder() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let me = users[0]
            for peer in users[1...] { try await fx.sendOK(peer, to: me.userId, content: "from \(peer.userId)") }
            // Last activity first.
            var list = try await fx.conversations(me)
            #expect(
                list.compactMap { $0["peerUserId"] as? String } == [users[3].userId, users[2].userId, users[1].userId])
            // Pinned first.
            let oldest = MessagingFixture.singleID(me, users[1])
            let patched = try await fx.client.patch(
                "/api/im/conversations/\(oldest)",
                json: ["isPinned": true, "draftText": "half a thought", "muted": true],
                token: me.accessToken)
            #expect(patched.status == 200)
            #expect(patched.data["isPinned"] as? Bool == true)
            #expect(patched.data["draftText"] as? String == "half a thought")
            #expect(patched.data["muted"] as? Bool == true)
            list = try await fx.conversations(me)
            #expect(
                list.compactMap { $0["peerUserId"] as? String } == [users[1].userId, users[3].userId, users[2].userId])
            // Paging.
            let page = try await fx.client.get("/api/im/conversations?limit=2&offset=2", token: me.accessToken)
            #expect((page.data["conversations"] as? [[String: Any]])?.count == 1)
            #expect(page.data["hasMore"] as? Bool == false)
            let first = try await fx.client.get("/api/im/conversations?limit=2", token: me.accessToken)
            #expect(first.data["hasMore"] as? Bool == true)
            // Only the caller's view changed.
            #expect(try await fx.conversation(users[1], oldest)?["isPinned"] as? Bool == false)
            // Someone else's conversation and an unknown one: the same 404 (1101); empty patch: 400.
            let others = MessagingFixture.singleID(users[1], users[2])
            try await fx.sendOK(users[1], to: users[2].userId)
            #expect(
                try await fx.client.patch(
                    "/api/im/conversations/\(others)", json: ["isPinned": true],
                    token: me.accessToken
                ).code == 1101)
            #expect(
                try await fx.client.patch(
                    "/api/im/conversations/si:a:b", json: ["isPinned": true],
                    token: me.accessToken
                ).code == 1101)
            #expect(
                try await fx.client.patch("/api/im/conversations/\(oldest)", json: [:], token: me.accessToken).code
                    == 1002)
        }
    }
}
