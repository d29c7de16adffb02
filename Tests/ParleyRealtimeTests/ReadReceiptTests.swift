import Foundation
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

/// Group read receipts (issue 22): who read a message, and read counts pushed to the sender in batches.
@Suite("Read receipts", .serialized)
struct ReadReceiptTests {
    @Test func sendersGetBatchedCountsAndMembersListTheReaders() async throws {
        try await MessagingFixture.run { fx in
            let owner = try await GatewayTests.device(fx, username: "owner")
            let members = try await fx.users(3)
            let group = try await fx.createGroup(owner.session, name: "Receipts", members: members)
            let first = try #require(
                try await fx.sendOK(owner.session, to: group.groupId, chatType: "group", content: "one")["id"]
                    as? String)
            let second = try await fx.sendOK(owner.session, to: group.groupId, chatType: "group", content: "two")
            let secondId = try #require(second["id"] as? String)
            let secondSeq = try #require(second["seq"] as? Int)

            // Two members read everything at once: the owner gets one event naming both messages' new counts (once a
            // second at most, so both reads may share it).
            for member in members.prefix(2) {
                let read = try await fx.client.post(
                    "/api/im/conversations/\(group.conversationId)/read", json: ["seq": secondSeq],
                    token: member.accessToken)
                #expect(read.status == 200)
            }
            var counts: [String: Int] = [:]
            for _ in 0..<4 where counts[first] != 2 || counts[secondId] != 2 {
                let event = SocialEventTests.data(try await owner.socket.next("read_receipts"))
                #expect(event["conversationId"] as? String == group.conversationId)
                for receipt in event["receipts"] as? [[String: Any]] ?? [] {
                    if let id = receipt["msgId"] as? String, let count = receipt["readCount"] as? Int {
                        counts[id] = count
                    }
                }
            }
            #expect(counts[first] == 2 && counts[secondId] == 2)

            let page = try await fx.client.get(
                "/api/im/messages/\(secondId)/reads?limit=1", token: members[2].accessToken)
            #expect(page.status == 200)
            #expect(page.data["readCount"] as? Int == 2 && page.data["unreadCount"] as? Int == 1)
            let readers = members.prefix(2).map(\.userId).sorted {
                Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8))
            }
            #expect(page.data["readers"] as? [String] == [readers[0]] && page.data["hasMore"] as? Bool == true)
            let cursor = try #require(page.string("cursor"))
            let next = try await fx.client.get(
                "/api/im/messages/\(secondId)/reads?limit=1&cursor=\(cursor)", token: owner.session.accessToken)
            #expect(next.data["readers"] as? [String] == [readers[1]] && next.data["hasMore"] as? Bool == false)
            #expect(next.data["cursor"] is NSNull)

            // Outsiders learn nothing; bad input is named.
            let stranger = try await fx.users(1, prefix: "stranger")[0]
            #expect(
                try await fx.client.get("/api/im/messages/\(first)/reads", token: stranger.accessToken).code == 1102)
            for query in ["limit=0", "limit=201", "cursor=bad%20id"] {
                let bad = try await fx.client.get(
                    "/api/im/messages/\(first)/reads?\(query)", token: owner.session.accessToken)
                #expect(bad.status == 400 && bad.code == 1002, "\(query)")
            }
        }
    }

    @Test func groupsOverTwoHundredMembersKeepNoReceipts() async throws {
        try await MessagingFixture.run { fx in
            let users = try await fx.users(2)
            let group = try await fx.createGroup(users[0], name: "Big", members: [users[1]])
            let id = try #require(
                try await fx.sendOK(users[0], to: group.groupId, chatType: "group", content: "hi")["id"] as? String)
            #expect(try await fx.client.get("/api/im/messages/\(id)/reads", token: users[1].accessToken).status == 200)
            // Members without accounts are enough for the count.
            _ = try await fx.database.query(
                """
                INSERT INTO conversation_members (app_id, user_id, conversation_id)
                SELECT \(fx.appId), 'filler_' || n, \(group.conversationId) FROM generate_series(1, 199) n
                """)
            let refused = try await fx.client.get("/api/im/messages/\(id)/reads", token: users[1].accessToken)
            #expect(refused.status == 409 && refused.code == 1145)
        }
    }
}
