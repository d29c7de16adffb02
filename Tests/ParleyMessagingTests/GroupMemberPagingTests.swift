import Foundation
import ParleyLiveSupport
import ParleyPostgres
import Testing

/// The member list of a group at the member limit (issue 22): pages from a cursor, each member once, in order.
@Suite("Group member paging", .serialized)
struct GroupMemberPagingTests {
    /// A group of `owner` and 1,999 members written directly (registering them would hash 1,999 passwords): every
    /// 200th an admin, joining times a second apart and some equal (the user id breaks the tie).
    func fullGroup(_ fx: MessagingFixture, owner: Session) async throws -> (groupId: String, conversationId: String) {
        let group = try await fx.createGroup(owner, members: [])
        _ = try await fx.database.query(
            """
            INSERT INTO users (app_id, id, nickname)
            SELECT \(fx.appId), 'm' || lpad(n::text, 4, '0'), 'Member ' || n FROM generate_series(1, 1999) n
            """)
        _ = try await fx.database.query(
            """
            INSERT INTO conversation_members (app_id, user_id, conversation_id, role, joined_at)
            SELECT \(fx.appId), 'm' || lpad(n::text, 4, '0'), \(group.conversationId),
                   CASE WHEN n % 200 = 0 THEN 'admin' ELSE 'member' END,
                   now() + make_interval(secs => (n / 2)::int)
            FROM generate_series(1, 1999) n
            """)
        _ = try await fx.database.query(
            "UPDATE groups SET member_count = 2000 WHERE app_id = \(fx.appId) AND id = \(group.groupId)")
        return group
    }

    func userIds(_ response: TestResponse) -> [String] {
        (response.data["members"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String }
    }

    @Test func aGroupAtTheLimitPagesFromACursorInOrder() async throws {
        try await MessagingFixture.run { fx in
            let owner = try await fx.users(1)[0]
            let group = try await fullGroup(fx, owner: owner)
            let path = "/api/im/groups/\(group.groupId)/members"
            var seen: [String] = []
            var cursor: String?
            var pages = 0
            for _ in 0..<10 {
                var target = "\(path)?limit=500"
                if let cursor { target += "&cursor=\(cursor)" }
                let page = try await fx.client.get(target, token: owner.accessToken)
                #expect(page.status == 200)
                seen += userIds(page)
                pages += 1
                cursor = page.data["cursor"] as? String
                #expect((page.data["hasMore"] as? Bool) == (cursor != nil))
                if cursor == nil { break }
            }
            let admins = (1...1999).filter { $0 % 200 == 0 }.map { String(format: "m%04d", $0) }
            let members = (1...1999).filter { $0 % 200 != 0 }.map { String(format: "m%04d", $0) }
            #expect(pages == 4)
            #expect(seen == [owner.userId] + admins + members)
            // Offsets page the same order.
            let third = try await fx.client.get("\(path)?offset=1000&limit=500", token: owner.accessToken)
            #expect(userIds(third) == Array(seen[1000..<1500]))

            // A time beyond any timestamp is clamped, not a database error: nobody joined after it.
            for extreme in ["2.999999999999999999.m0001", "0.-999999999999999999.a"] {
                let page = try await fx.client.get("\(path)?limit=5&cursor=\(extreme)", token: owner.accessToken)
                #expect(page.status == 200, "\(extreme)")
                #expect(userIds(page) == (extreme.hasPrefix("2") ? [] : Array(seen.prefix(5))), "\(extreme)")
            }
            for query in [
                "cursor=nope", "cursor=3.1.m0001", "cursor=1.x.m0001", "cursor=1.5.", "cursor=1.5.a%20b",
                "cursor=1.1234567890123456789.m0001", "cursor=1.-.m0001",
            ] {
                let bad = try await fx.client.get("\(path)?\(query)", token: owner.accessToken)
                #expect(bad.status == 400 && bad.code == 1002, "\(query)")
            }
            // An offset with a cursor skips that many after it.
            let second = try await fx.client.get("\(path)?limit=500", token: owner.accessToken)
            let skipped = try await fx.client.get(
                "\(path)?limit=10&offset=5&cursor=\(second.data["cursor"] as? String ?? "")", token: owner.accessToken)
            #expect(userIds(skipped) == Array(seen[505..<515]))
        }
    }
}
