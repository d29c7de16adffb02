import Foundation
import ParleyLiveSupport
import Testing

/// Replies quote the message they answer, whatever becomes of it; @mentions mark the mentioned members' summaries
/// until they read past them (issue 22).
@Suite("Replies and mentions", .serialized)
struct ReplyAndMentionTests {
    func reply(_ message: [String: Any]?) -> [String: Any]? { message?["reply"] as? [String: Any] }

    func send(
        _ fx: MessagingFixture, _ from: Session, to toId: String, chatType: String = "single", _ extra: [String: Any]
    )
        async throws -> TestResponse
    {
        var body: [String: Any] = [
            "toId": toId, "chatType": chatType, "msgType": "text", "content": "re", "clientMsgId": UUID().uuidString,
        ]
        body.merge(extra) { $1 }
        return try await fx.client.post("/api/im/messages", json: body, token: from.accessToken)
    }

    @Test func aReplyQuotesTheOriginalThroughEditAndRevoke() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let conversationId = MessagingFixture.singleID(alice, bob)
            let original = try #require(
                try await fx.sendOK(alice, to: bob.userId, content: "dinner at 8?")["id"] as? String)
            let answer = try await send(fx, bob, to: alice.userId, ["replyTo": original, "content": "yes"])
            #expect(answer.status == 201)
            let quote = try #require(reply(answer.data))
            #expect(quote["msgId"] as? String == original && quote["fromId"] as? String == alice.userId)
            #expect(quote["msgType"] as? String == "text" && quote["text"] as? String == "dinner at 8?")
            #expect(quote["revoked"] as? Bool == false)
            let replyId = try #require(answer.string("id"))
            // A number works as well as a string; messages that are no reply carry no `reply`.
            let numeric = try await send(fx, alice, to: bob.userId, ["replyTo": Int(original)!])
            #expect(numeric.status == 201 && reply(numeric.data)?["msgId"] as? String == original)
            #expect(reply(try await fx.sendOK(alice, to: bob.userId)) == nil)

            func quoteInHistory() async throws -> [String: Any]? {
                let history = try await fx.history(alice, conversationId)
                let messages = history.data["messages"] as? [[String: Any]] ?? []
                return reply(messages.first { $0["id"] as? String == replyId })
            }
            #expect(try await quoteInHistory()?["text"] as? String == "dinner at 8?")
            let edited = try await fx.client.patch(
                "/api/im/messages/\(original)", json: ["content": "dinner at 9?"], token: alice.accessToken)
            #expect(edited.status == 200)
            #expect(try await quoteInHistory()?["text"] as? String == "dinner at 9?")
            #expect(
                try await fx.client.post("/api/im/messages/\(original)/revoke", token: alice.accessToken).status == 200)
            let revoked = try #require(try await quoteInHistory())
            #expect(revoked["text"] as? String == "message revoked" && revoked["revoked"] as? Bool == true)
            #expect(revoked["msgId"] as? String == original)
            let byId = try await fx.client.get("/api/im/messages/\(replyId)", token: bob.accessToken)
            #expect(reply(byId.data)?["revoked"] as? Bool == true)

            // Only a message of the same conversation that the sender sees.
            let elsewhere = try #require(try await fx.sendOK(alice, to: carol.userId)["id"] as? String)
            for target in [elsewhere, "999999999"] {
                let refused = try await send(fx, bob, to: alice.userId, ["replyTo": target])
                #expect(refused.status == 404 && refused.code == 1144, "\(target)")
            }
            for bad in ["abc", "-1", ""] as [Any] + [true, ["x"]] {
                let refused = try await send(fx, bob, to: alice.userId, ["replyTo": bad])
                #expect(refused.status == 400 && refused.code == 1002, "\(bad)")
            }
            // Nothing stored by the refusals.
            #expect(try await fx.historySeqs(bob, conversationId).count == 4)
        }
    }

    @Test func mentionsMarkTheMentionedSummariesUntilTheyReadPastThem() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let (owner, member, muted, other) = (users[0], users[1], users[2], users[3])
            let group = try await fx.createGroup(owner, name: "Mentions", members: [member, muted, other])
            #expect(
                try await fx.client.patch(
                    "/api/im/conversations/\(group.conversationId)", json: ["muted": true], token: muted.accessToken
                ).status == 200)
            try await fx.sendOK(member, to: group.groupId, chatType: "group", content: "before")

            let mentioning = try await send(
                fx, member, to: group.groupId, chatType: "group",
                ["mentions": ["userIds": [muted.userId, muted.userId, "nobody_here"]], "content": "@muted look"])
            #expect(mentioning.status == 201)
            let mentions = try #require(mentioning.data["mentions"] as? [String: Any])
            #expect(
                mentions["userIds"] as? [String] == [muted.userId, "nobody_here"] && mentions["all"] as? Bool == false)
            let firstMention = try #require(mentioning.string("id"))
            try await fx.sendOK(member, to: group.groupId, chatType: "group", content: "after")
            _ = try await send(
                fx, member, to: group.groupId, chatType: "group", ["mentions": ["userIds": [muted.userId]]])

            let summary = try #require(try await fx.conversation(muted, group.conversationId))
            #expect(summary["mentioned"] as? Bool == true && summary["mentionMsgId"] as? String == firstMention)
            let others = try #require(try await fx.conversation(other, group.conversationId))
            #expect(others["mentioned"] as? Bool == false && others["mentionMsgId"] is NSNull)
            let history = try await fx.history(muted, group.conversationId)
            let stored = (history.data["messages"] as? [[String: Any]])?.first { $0["id"] as? String == firstMention }
            #expect((stored?["mentions"] as? [String: Any])?["userIds"] as? [String] == [muted.userId, "nobody_here"])

            // Reading past the first mention points at the next one; reading past all clears it.
            let firstSeq = try #require(mentioning.data["seq"] as? Int)
            let partly = try await fx.client.post(
                "/api/im/conversations/\(group.conversationId)/read", json: ["seq": firstSeq], token: muted.accessToken)
            #expect(partly.data["mentioned"] as? Bool == false)
            let read = try await fx.client.post(
                "/api/im/conversations/\(group.conversationId)/read", json: ["seq": 1000], token: muted.accessToken)
            #expect(read.status == 200 && read.data["mentioned"] as? Bool == false)
            #expect(read.data["mentionMsgId"] is NSNull)

            // Everybody: the owner and admins only; the mention then marks every other member.
            let denied = try await send(fx, member, to: group.groupId, chatType: "group", ["mentions": ["all": true]])
            #expect(denied.status == 403 && denied.code == 1143)
            let all = try await send(fx, owner, to: group.groupId, chatType: "group", ["mentions": ["all": true]])
            #expect(all.status == 201 && (all.data["mentions"] as? [String: Any])?["all"] as? Bool == true)
            for user in [member, muted, other] {
                #expect(
                    try await fx.conversation(user, group.conversationId)?["mentionMsgId"] as? String
                        == all.string("id"))
            }
            #expect(try await fx.conversation(owner, group.conversationId)?["mentioned"] as? Bool == false)

            // Bad input, nothing stored.
            let before = try await fx.messageCount()
            let alone = try await send(fx, owner, to: member.userId, ["mentions": ["userIds": [member.userId]]])
            #expect(alone.status == 400 && alone.code == 1002)
            for bad in [["userIds": "x"], ["userIds": [1]], ["all": "yes"], ["userIds": ["bad id"]], ["who": []]]
                as [[String: Any]]
            {
                let refused = try await send(fx, owner, to: group.groupId, chatType: "group", ["mentions": bad])
                #expect(refused.status == 400 && refused.code == 1002, "\(bad)")
            }
            let many = (0...MessageMentionsLimit.maxUsers).map { "u\($0)" }
            let tooMany = try await send(
                fx, owner, to: group.groupId, chatType: "group", ["mentions": ["userIds": many]])
            #expect(tooMany.code == 1002)
            #expect(try await fx.messageCount() == before)
        }
    }
}

/// The limit openapi.yaml states.
enum MessageMentionsLimit {
    static let maxUsers = 100
}
