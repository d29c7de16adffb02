import Foundation
import ParleyLiveSupport
@testable import ParleyMessaging
import ParleyPostgres
import Testing

/// `parley_send_messages`: many sends in one statement, each with its own outcome, seqs without gaps.
@Suite("Send batches", .serialized)
struct SendBatchTests {
    @Test func eachMessageOfABatchGetsItsOwnOutcome() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let group = try await fx.createGroup(alice, members: [bob])
            let repository = MessageRepository(database: fx.database)
            func message(_ from: Session, to: String, chat: ChatType = .single, client: String) -> MessageRepository.NewMessage {
                MessageRepository.NewMessage(
                    appId: fx.appId,
                    conversationId: chat == .single ? ConversationID.single(from.userId, to) : ConversationID.group(to),
                    chatType: chat, fromId: from.userId, toId: to, msgType: .text, content: Array(#""hi""#.utf8),
                    extra: client == "b1" ? Array(#"{"k":"v \" \\ ,{}"}"#.utf8) : nil, clientMsgId: client)
            }
            let outcomes = try await repository.send(batch: [
                message(alice, to: bob.userId, client: "a1"),
                message(alice, to: bob.userId, client: "a1"),            // the same clientMsgId again
                message(carol, to: group.groupId, chat: .group, client: "c1"), // not a member
                message(bob, to: "ghost", client: "b0"),                // no such user
                message(bob, to: alice.userId, client: "b1"),
                message(bob, to: group.groupId, chat: .group, client: "b2"),
            ])
            #expect(outcomes.count == 6)
            guard case .success(.stored(let first)) = outcomes[0] else { Issue.record("\(outcomes[0])"); return }
            guard case .success(.duplicate(let again)) = outcomes[1] else { Issue.record("\(outcomes[1])"); return }
            #expect(again.id == first.id)
            guard case .success(.notMember) = outcomes[2] else { Issue.record("\(outcomes[2])"); return }
            guard case .success(.noSuchUser) = outcomes[3] else { Issue.record("\(outcomes[3])"); return }
            guard case .success(.stored(let reply)) = outcomes[4] else { Issue.record("\(outcomes[4])"); return }
            #expect(reply.extra == .object(["k": "v \" \\ ,{}"]))
            guard case .success(.stored(let inGroup)) = outcomes[5] else { Issue.record("\(outcomes[5])"); return }
            #expect([first.seq, reply.seq] == [1, 2])
            #expect(inGroup.seq == 2) // after group_created
            // Refused sends gave their seq back: no gaps anywhere.
            let gaps = try await fx.database.query("""
                SELECT count(*) AS n FROM conversations c
                WHERE c.last_seq <> (SELECT count(*) FROM messages m WHERE m.app_id = c.app_id AND m.conversation_id = c.id)
                """)[0].decode("n", as: Int.self)
            #expect(gaps == 0)
            #expect(try await fx.historySeqs(bob, group.conversationId) == [1, 2])
        }
    }
}
