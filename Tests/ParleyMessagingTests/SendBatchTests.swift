import Foundation
import ParleyLiveSupport
import ParleyPostgres
import Testing

@testable import ParleyMessaging

/// `parley_send_messages`: many sends in one statement, each with its own outcome, seqs without gaps.
@Suite("Send batches", .serialized)
struct SendBatchTests {
    @Test func eachMessageOfABatchGetsItsOwnOutcome() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(3)
            let (alice, bob, carol) = (users[0], users[1], users[2])
            let group = try await fx.createGroup(alice, members: [bob])
            let repository = MessageRepository(database: fx.database)
            func message(_ from: Session, to: String, chat: ChatType = .single, client: String)
                -> MessageRepository.NewMessage
            {
                MessageRepository.NewMessage(
                    appId: fx.appId,
                    conversationId: chat == .single ? ConversationID.single(from.userId, to) : ConversationID.group(to),
                    chatType: chat, fromId: from.userId, toId: to, msgType: .text, content: Array(#""hi""#.utf8),
                    extra: client == "b1" ? Array(#"{"k":"v \" \\ ,{}"}"#.utf8) : nil, clientMsgId: client)
            }
            // One statement for all: mixed outcomes, numbered per conversation.
            let outcomes = try await repository.send(batch: [
                message(alice, to: bob.userId, client: "a1"),
                message(carol, to: group.groupId, chat: .group, client: "c1"), // not a member
                message(bob, to: "ghost", client: "b0"), // no such user
                message(bob, to: alice.userId, client: "b1"),
                message(bob, to: group.groupId, chat: .group, client: "b2"),
                message(alice, to: bob.userId, client: "a2"),
            ])
            #expect(outcomes.count == 6)
            guard case .success(.stored(let first)) = outcomes[0] else { Issue.record("\(outcomes[0])"); return }
            guard case .success(.notMember) = outcomes[1] else { Issue.record("\(outcomes[1])"); return }
            guard case .success(.noSuchUser) = outcomes[2] else { Issue.record("\(outcomes[2])"); return }
            guard case .success(.stored(let reply)) = outcomes[3] else { Issue.record("\(outcomes[3])"); return }
            #expect(reply.extra == .object(["k": "v \" \\ ,{}"]))
            guard case .success(.stored(let inGroup)) = outcomes[4] else { Issue.record("\(outcomes[4])"); return }
            guard case .success(.stored(let second)) = outcomes[5] else { Issue.record("\(outcomes[5])"); return }
            #expect([first.seq, reply.seq, second.seq] == [1, 2, 3])
            #expect(inGroup.seq == 2) // after group_created
            // A repeated clientMsgId (here within the batch and from before) sends the batch one by one.
            let retried = try await repository.send(batch: [
                message(alice, to: bob.userId, client: "a1"),
                message(alice, to: bob.userId, client: "a3"),
                message(alice, to: bob.userId, client: "a3"),
            ])
            guard case .success(.duplicate(let again)) = retried[0] else { Issue.record("\(retried[0])"); return }
            #expect(again.id == first.id)
            guard case .success(.stored(let third)) = retried[1] else { Issue.record("\(retried[1])"); return }
            guard case .success(.duplicate(let thirdAgain)) = retried[2] else { Issue.record("\(retried[2])"); return }
            #expect(third.seq == 4 && thirdAgain.id == third.id)
            // Refused sends gave their seq back: no gaps anywhere.
            let gaps = try await fx.database.query(
                """
                SELECT count(*) AS n FROM conversations c
                WHERE c.last_seq <> (SELECT count(*) FROM messages m WHERE m.app_id = c.app_id AND m.conversation_id = c.id)
                """)[0].decode("n", as: Int.self)
            #expect(gaps == 0)
            #expect(try await fx.historySeqs(bob, group.conversationId) == [1, 2])
        }
    }

    /// Both statements take their verdicts from `parley_send_verdict` (migrations/0010): every refusal comes out the
    /// same from a batch and from a message sent alone.
    @Test func oneMessageAndABatchGiveTheSameVerdicts() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(4)
            let (alice, bob, carol, dave) = (users[0], users[1], users[2], users[3])
            let open = try await fx.createGroup(alice, members: [bob, dave])
            let dissolved = try await fx.createGroup(alice, members: [bob])
            #expect(
                try await fx.client.patch(
                    "/api/im/groups/\(open.groupId)/members/\(dave.userId)", json: ["blocked": true],
                    token: alice.accessToken
                ).status == 200)
            #expect(
                try await fx.client.delete("/api/im/groups/\(dissolved.groupId)", token: alice.accessToken).status
                    == 200)
            let repository = MessageRepository(database: fx.database)
            var serial = 0
            func message(_ from: Session, to: String, chat: ChatType, system: Bool = false)
                -> MessageRepository.NewMessage
            {
                serial += 1
                var message = MessageRepository.NewMessage(
                    appId: fx.appId,
                    conversationId: chat == .single ? ConversationID.single(from.userId, to) : ConversationID.group(to),
                    chatType: chat, fromId: from.userId, toId: to, msgType: system ? .notify : .text,
                    content: Array(#""verdict""#.utf8), extra: nil, clientMsgId: "v\(serial)")
                message.system = system
                return message
            }
            func kind(_ outcome: Result<SendOutcome, any Error>) -> String {
                switch outcome {
                case .success(.stored): "stored"
                case .success(.duplicate): "duplicate"
                case .success(.noSuchUser): "no_user"
                case .success(.notMember): "not_member"
                case .success(.blocked): "blocked"
                case .success(.dissolved): "dissolved"
                case .success(.peerRefused): "peer_refused"
                case .success(.notFriend): "not_friend"
                case .success(.muted): "muted"
                case .success(.mutedAll): "muted_all"
                case .success(.mentionAllDenied): "mention_all_denied"
                case .failure(let error): "error: \(error)"
                }
            }
            let cases: [(from: Session, to: String, chat: ChatType, expected: String)] = [
                (alice, bob.userId, .single, "stored"),
                (bob, "ghost", .single, "no_user"),
                (carol, open.groupId, .group, "not_member"),
                (bob, "no-such-group", .group, "not_member"),
                (dave, open.groupId, .group, "blocked"),
                (bob, dissolved.groupId, .group, "dissolved"),
                (alice, dissolved.groupId, .group, "dissolved"),
                (bob, open.groupId, .group, "stored"),
                (dave, carol.userId, .single, "peer_refused"),
                (carol, dave.userId, .single, "stored"),
            ]
            // Carol blocked Dave (migrations/0019): his 1:1 messages to her are refused, hers to him are not.
            _ = try await fx.database.query(
                "INSERT INTO user_blocks (app_id, blocker_id, blocked_id) VALUES (\(fx.appId), \(carol.userId), \(dave.userId))"
            )
            for entry in cases {
                let alone = kind(
                    await Result { try await repository.send(message(entry.from, to: entry.to, chat: entry.chat)) })
                // With a second message, so that the batch statement runs (a batch of one is sent alone).
                let batch = try await repository.send(batch: [
                    message(entry.from, to: entry.to, chat: entry.chat),
                    message(alice, to: bob.userId, chat: .single),
                ])
                #expect(alone == entry.expected, "\(entry.from.userId) -> \(entry.to)")
                #expect(kind(batch[0]) == entry.expected, "\(entry.from.userId) -> \(entry.to) in a batch")
                #expect(kind(batch[1]) == "stored")
            }
            // Only friends may chat: strangers are refused, also in their conversation from before.
            _ = try await fx.database.query(
                """
                INSERT INTO friendships (app_id, user_id, friend_id)
                VALUES (\(fx.appId), \(alice.userId), \(bob.userId)), (\(fx.appId), \(bob.userId), \(alice.userId))
                """)
            _ = try await fx.database.query("UPDATE apps SET direct_messages = 'friends' WHERE id = \(fx.appId)")
            for (from, to, expected) in [
                (carol, bob, "not_friend"), (carol, dave, "not_friend"), (bob, alice, "stored"),
            ] {
                let alone = kind(
                    await Result { try await repository.send(message(from, to: to.userId, chat: .single)) })
                let batch = try await repository.send(batch: [
                    message(from, to: to.userId, chat: .single), message(alice, to: bob.userId, chat: .single),
                ])
                #expect(alone == expected && kind(batch[0]) == expected, "\(from.userId) -> \(to.userId)")
                #expect(kind(batch[1]) == "stored")
            }
            // A server-written notify skips the membership checks (single statement only: batches carry none).
            let notify = kind(
                await Result { try await repository.send(message(carol, to: open.groupId, chat: .group, system: true)) }
            )
            #expect(notify == "stored")
            // Refusals gave their seq back: no gaps anywhere.
            let gaps = try await fx.database.query(
                """
                SELECT count(*) AS n FROM conversations c
                WHERE c.last_seq <> (SELECT count(*) FROM messages m WHERE m.app_id = c.app_id AND m.conversation_id = c.id)
                """)[0].decode("n", as: Int.self)
            #expect(gaps == 0)
        }
    }
}
