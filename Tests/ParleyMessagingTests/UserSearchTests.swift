import Foundation
import ParleyLiveSupport
import ParleyPostgres
import Testing

@testable import ParleyMessaging

/// `GET /api/users/search` (issue 19): exact username or id first, then nickname prefixes, case-insensitively, within
/// the caller's app; nobody who blocked the caller, hid from search or deleted the account; paged with no duplicate
/// and no gap.
@Suite("User search")
struct UserSearchTests {
    /// Registers `username` and gives it `nickname`.
    static func user(_ fx: MessagingFixture, _ username: String, nickname: String) async throws -> Session {
        let session = try Session(try await fx.client.register(appKey: fx.appKey, username: username))
        let set = try await fx.client.patch("/api/users/me", json: ["nickname": nickname], token: session.accessToken)
        guard set.status == 200 else { throw TestFailure("nickname: \(set.text)") }
        return session
    }

    static func search(_ fx: MessagingFixture, _ by: Session, _ query: String) async throws -> TestResponse {
        try await fx.client.get("/api/users/search?\(query)", token: by.accessToken)
    }

    static func ids(_ response: TestResponse) -> [String] {
        (response.data["users"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    static func q(_ text: String) -> String {
        "q=" + text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    }

    @Test func findsExactUsernamesAndIdsThenNicknamePrefixes() async throws {
        try await MessagingFixture.run { fx in
            let seeker = try await Self.user(fx, "seeker", nickname: "Seeker")
            let alice = try await Self.user(fx, "alice", nickname: "Wonder")
            let bob = try await Self.user(fx, "bob", nickname: "Alice B")
            let carol = try await Self.user(fx, "carol", nickname: "alicia")
            let dave = try await Self.user(fx, "dave", nickname: "ALI")
            _ = try await Self.user(fx, "erin", nickname: "Bali")
            let ming = try await Self.user(fx, "ming", nickname: "小明同学")

            // The username in any case first, then the nicknames that start with it.
            let byUsername = try await Self.search(fx, seeker, Self.q("ALICE"))
            #expect(byUsername.status == 200, "\(byUsername.text)")
            #expect(Self.ids(byUsername) == [alice.userId, bob.userId])
            #expect(byUsername.data["hasMore"] as? Bool == false && byUsername.data["cursor"] is NSNull)
            let first = try #require((byUsername.data["users"] as? [[String: Any]])?.first)
            #expect(Set(first.keys) == ["id", "nickname", "avatar", "signature", "ex", "deleted"])
            #expect(first["nickname"] as? String == "Wonder" && first["signature"] as? String == "")

            // An id, exactly as issued.
            #expect(Self.ids(try await Self.search(fx, seeker, Self.q(alice.userId))) == [alice.userId])
            #expect(Self.ids(try await Self.search(fx, seeker, Self.q(alice.userId.uppercased()))) == [])

            // Prefixes, in lower-cased nickname order; spaces around q do not count; not infixes.
            #expect(
                Self.ids(try await Self.search(fx, seeker, Self.q("  aLi "))) == [
                    dave.userId, bob.userId, carol.userId,
                ])
            #expect(Self.ids(try await Self.search(fx, seeker, Self.q("alicia"))) == [carol.userId])
            #expect(Self.ids(try await Self.search(fx, seeker, Self.q("lice"))) == [])
            // Several bytes per character: the range still ends right after the prefix.
            #expect(Self.ids(try await Self.search(fx, seeker, Self.q("小明"))) == [ming.userId])
            #expect(Self.ids(try await Self.search(fx, seeker, Self.q("小"))) == [ming.userId])
            #expect(Self.ids(try await Self.search(fx, seeker, Self.q("小明同学们"))) == [])
        }
    }

    @Test func leavesOutWhoBlockedTheCallerHidOrLeftAndOtherApps() async throws {
        try await MessagingFixture.run { fx in
            let seeker = try await Self.user(fx, "seeker", nickname: "Target me")
            let visible = try await Self.user(fx, "visible", nickname: "Target visible")
            let blocker = try await Self.user(fx, "blocker", nickname: "Target blocker")
            let hidden = try await Self.user(fx, "hidden", nickname: "Target hidden")
            let deleted = try await Self.user(fx, "deleted", nickname: "Target deleted")
            // Someone the caller blocked is still found (only their own block hides a user from the caller).
            let blockedBySeeker = try await Self.user(fx, "blocked", nickname: "Target blocked")
            let (otherApp, _) = try await fx.live.createApp(name: "Other")
            let stranger = try Session(try await fx.client.register(appKey: otherApp.appKey, username: "stranger"))
            _ = try await fx.client.patch(
                "/api/users/me", json: ["nickname": "Target stranger"], token: stranger.accessToken)

            let hide = try await fx.client.patch(
                "/api/users/me", json: ["searchable": false], token: hidden.accessToken)
            #expect(hide.status == 200 && hide.data["searchable"] as? Bool == false)
            _ = try await fx.database.query(
                """
                INSERT INTO user_blocks (app_id, blocker_id, blocked_id)
                VALUES (\(fx.appId), \(blocker.userId), \(seeker.userId)),
                       (\(fx.appId), \(seeker.userId), \(blockedBySeeker.userId))
                """)
            _ = try await fx.database.query(
                "UPDATE users SET deleted_at = now() WHERE app_id = \(fx.appId) AND id = \(deleted.userId)")

            let found = try await Self.search(fx, seeker, Self.q("target"))
            #expect(Self.ids(found) == [blockedBySeeker.userId, visible.userId], "\(found.text)")
            // A known username or id finds them no better.
            for user in [blocker, hidden, deleted] {
                #expect(Self.ids(try await Self.search(fx, seeker, Self.q(user.userId))) == [])
            }
            for username in ["blocker", "hidden", "deleted", "seeker", "stranger"] {
                #expect(Self.ids(try await Self.search(fx, seeker, Self.q(username))) == [], "\(username)")
            }
            #expect(Self.ids(try await Self.search(fx, seeker, Self.q(stranger.userId))) == [])
            // The blocker still finds the caller; others still find the blocker.
            #expect(Self.ids(try await Self.search(fx, blocker, Self.q("seeker"))) == [seeker.userId])
            #expect(Self.ids(try await Self.search(fx, visible, Self.q("blocker"))) == [blocker.userId])
            // Searchable again: found again.
            _ = try await fx.client.patch("/api/users/me", json: ["searchable": true], token: hidden.accessToken)
            #expect(Self.ids(try await Self.search(fx, seeker, Self.q("hidden"))) == [hidden.userId])
        }
    }

    /// Pages of every size, the exact match and equal nicknames included, list each user once, in order.
    @Test func pagesHaveNoDuplicateAndNoGap() async throws {
        try await MessagingFixture.run { fx in
            let seeker = try await Self.user(fx, "seeker", nickname: "Seeker")
            // The username "page" is an exact match whose nickname sorts after the prefix matches.
            let exact = try await Self.user(fx, "page", nickname: "Zed")
            var expected: [(key: String, id: String)] = []
            let nicknames = (0..<20).map { "Page \($0 % 5)" } + ["PAGE 1", "page", "Pagé", "Pager"]
            for (index, nickname) in nicknames.enumerated() {
                let user = try await Self.user(fx, "pager\(index)", nickname: nickname)
                // "Pagé" starts with "pag", not "page".
                if nickname.lowercased().hasPrefix("page") { expected.append((nickname.lowercased(), user.userId)) }
            }
            let order =
                [exact.userId]
                + expected.sorted {
                    $0.key.utf8.lexicographicallyPrecedes($1.key.utf8)
                        || ($0.key == $1.key && $0.id.utf8.lexicographicallyPrecedes($1.id.utf8))
                }.map(\.id)

            for limit in [1, 2, 4, 7, 50] {
                var seen: [String] = []
                var cursor: String?
                for _ in 0..<40 {
                    var query = Self.q("page") + "&limit=\(limit)"
                    if let cursor { query += "&cursor=\(cursor)" }
                    let page = try await Self.search(fx, seeker, query)
                    #expect(page.status == 200, "\(page.text)")
                    let ids = Self.ids(page)
                    #expect(ids.count <= limit)
                    seen += ids
                    guard page.data["hasMore"] as? Bool == true else {
                        #expect(page.data["cursor"] is NSNull)
                        break
                    }
                    #expect(ids.count == limit)
                    let next: String = try #require(page.string("cursor"))
                    cursor = next
                }
                #expect(seen == order, "limit \(limit)")
            }
            // Without a limit: 20 (24 nicknames start with "pag"; no username is "pag").
            let defaultPage = try await Self.search(fx, seeker, Self.q("pag"))
            #expect(Self.ids(defaultPage) == Array(order.dropFirst().prefix(20)))
            #expect(defaultPage.data["hasMore"] as? Bool == true)
            let rest = try await Self.search(
                fx, seeker, Self.q("pag") + "&cursor=\(defaultPage.string("cursor") ?? "")")
            #expect(Self.ids(rest).count == 4 && rest.data["hasMore"] as? Bool == false)
        }
    }

    @Test func badParametersAnswer1002() async throws {
        try await MessagingFixture.run { fx in
            let seeker = try await Self.user(fx, "seeker", nickname: "Seeker")
            let cases: [(String, Int)] = [
                ("", 1002), ("q=", 1002), ("q=%20%20", 1002), ("q=" + String(repeating: "a", count: 65), 1002),
                ("q=a%01b", 1002), ("q=a%C2%85", 1002), ("q=%ZZ", 1002), ("q=a&limit=0", 1002),
                ("q=a&limit=51", 1002), ("q=a&limit=x", 1002), ("q=a&cursor=2-61-u_x", 1114),
                ("q=a&cursor=1-6-u_x", 1114), ("q=a&cursor=1-61-bad%20id", 1114), ("q=a&cursor=garbage", 1114),
            ]
            for (query, code) in cases {
                let answer = try await Self.search(fx, seeker, query)
                #expect(answer.status == 400 && answer.code == code, "\(query): \(answer.text)")
            }
            // Sixty-four characters, and a well-formed cursor the server never issued, are fine.
            #expect(try await Self.search(fx, seeker, "q=" + String(repeating: "a", count: 64)).status == 200)
            #expect(try await Self.search(fx, seeker, "q=a&cursor=1-00ff61-u_x&limit=50").status == 200)
            #expect(try await Self.search(fx, seeker, "q=a&cursor=").status == 200)
            #expect(try await fx.client.get("/api/users/search?q=a").status == 401)
        }
    }

    /// The nickname branch is a range of `users_nickname_search`, from the later of the prefix and the cursor.
    @Test func aPrefixIsAnIndexRange() async throws {
        try await MessagingFixture.run { fx in
            let statement = UserSearchRepository.statement(
                UserSearchQuery(
                    text: "Ann", limit: 10, after: UserSearchCursor(rank: 1, key: "anna", id: "u_1")),
                appId: fx.appId, callerId: "u_0")
            let plan = try await fx.database.withTransaction { connection in
                // A handful of rows makes any plan cheap: rule out the sequential scan to see whether the prefix
                // and the cursor themselves drive the index (or show as a Filter).
                _ = try await connection.query("SET LOCAL enable_seqscan = off")
                return try await connection.query(
                    PostgresQuery(unsafeSQL: "EXPLAIN " + statement.sql, binds: statement.binds)
                ).map { try $0.decode("QUERY PLAN", as: String.self) }.joined(separator: "\n")
            }
            let range = try #require(
                plan.split(separator: "\n").drop { !$0.contains("users_nickname_search") }.dropFirst().first)
            // The prefix's two bounds and the cursor, all in the index condition.
            #expect(range.contains("Index Cond") && range.contains(">= 'ann'") && range.contains("< 'ano'"), "\(plan)")
            #expect(range.contains("ROW((lower(nickname))::text, (id)::text) > ROW('anna'"), "\(plan)")
        }
    }

    @Test func cursorsRoundTrip() {
        for cursor in [
            UserSearchCursor(rank: 0, key: "zed", id: "u_1"), UserSearchCursor(rank: 1, key: "小明 a-b", id: "a-b.c@d"),
            UserSearchCursor(rank: 1, key: "", id: "x"),
        ] {
            #expect(UserSearchCursor(cursor.description) == cursor)
        }
        #expect(UserSearchCursor("1-00-u") == UserSearchCursor(rank: 1, key: "", id: "u"))
        #expect(UserSearchCursor("1-ff-u")?.key == "\u{FFFD}")
        #expect(UserSearchCursor("1--") == nil && UserSearchCursor("0-6") == nil && UserSearchCursor("") == nil)
    }
}
