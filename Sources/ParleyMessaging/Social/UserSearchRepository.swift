import ParleyAuth
import ParleyPostgres

/// A page of user search.
struct UserSearchPage: Sendable, Encodable {
    var users: [PublicProfile]
    /// Where the next page starts; nil when this is the last.
    var cursor: String?
    var hasMore: Bool

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(users, forKey: .users)
        try container.encode(cursor, forKey: .cursor) // explicit null: the last page says so
        try container.encode(hasMore, forKey: .hasMore)
    }

    enum CodingKeys: String, CodingKey { case users, cursor, hasMore }
}

/// Finds the users of the caller's app that `q` names: the one whose username (case-insensitively) or id it is, then
/// those whose nickname starts with it (case-insensitively). Nobody who blocked the caller, turned `searchable` off
/// or deleted the account is found, nor the caller.
struct UserSearchRepository: Sendable {
    let database: PostgresClient

    func search(_ query: UserSearchQuery, appId: Int64, callerId: String) async throws -> UserSearchPage {
        let rows = try await database.query(Self.statement(query, appId: appId, callerId: callerId))
        var users: [PublicProfile] = []
        var last: UserSearchCursor?
        for row in rows.prefix(query.limit) {
            users.append(try PublicProfile(row: row))
            last = UserSearchCursor(
                rank: try row.decode("rank"), key: try row.decode("sort_key"), id: try row.decode("id"))
        }
        let hasMore = rows.count > query.limit
        return UserSearchPage(users: users, cursor: hasMore ? last?.description : nil, hasMore: hasMore)
    }

    /// Up to `limit + 1` users (one more tells whether there is another page), with their rank and sort key. The
    /// nickname branch reads `users_nickname_search` in order from the later of the prefix and the cursor, and stops
    /// after `limit + 1` visible users.
    static func statement(_ query: UserSearchQuery, appId: Int64, callerId: String) -> PostgresQuery {
        let q = query.text
        let includeExact = query.after.map { $0.rank == 0 } ?? true
        // Within a rank, after the cursor's (key, id); ("", "") is before every user (nicknames are never empty).
        let exactAfter = query.after.flatMap { $0.rank == 0 ? $0 : nil }
        let prefixAfter = query.after.flatMap { $0.rank == 1 ? $0 : nil }
        return """
            SELECT * FROM (
                (SELECT 0 AS rank, \(unescaped: PublicProfile.columns(of: "u")), lower(u.nickname) AS sort_key
                 FROM users u
                 WHERE \(includeExact) AND u.app_id = \(appId) AND (u.id = \(q) OR u.username = lower(\(q)::text))
                   AND (lower(u.nickname) COLLATE "C", u.id COLLATE "C")
                       > (\(exactAfter?.key ?? ""), \(exactAfter?.id ?? ""))
                   AND u.deleted_at IS NULL AND u.searchable AND u.id <> \(callerId)
                   AND NOT EXISTS (SELECT 1 FROM user_blocks b
                                   WHERE b.app_id = u.app_id AND b.blocker_id = u.id AND b.blocked_id = \(callerId)))
                UNION ALL
                -- The nicknames that start with lower(q) are the range [lower(q), the same with its last character
                -- one code point higher) in byte order; a last character that has no successor (U+10FFFF) bounds
                -- the range by more of it than any nickname holds.
                (SELECT 1, \(unescaped: PublicProfile.columns(of: "u")), lower(u.nickname)
                 FROM users u
                 WHERE u.app_id = \(appId)
                   AND lower(u.nickname) COLLATE "C" >= lower(\(q)::text) COLLATE "C"
                   AND lower(u.nickname) COLLATE "C" < (
                       CASE ascii(right(lower(\(q)::text), 1))
                           WHEN 1114111 THEN lower(\(q)::text) || repeat(chr(1114111), 256)
                           WHEN 55295 THEN left(lower(\(q)::text), -1) || chr(57344)
                           ELSE left(lower(\(q)::text), -1) || chr(ascii(right(lower(\(q)::text), 1)) + 1)
                       END) COLLATE "C"
                   AND (lower(u.nickname) COLLATE "C", u.id COLLATE "C")
                       > (\(prefixAfter?.key ?? ""), \(prefixAfter?.id ?? ""))
                   AND u.id <> \(q) AND u.username IS DISTINCT FROM lower(\(q)::text)
                   AND u.deleted_at IS NULL AND u.searchable AND u.id <> \(callerId)
                   AND NOT EXISTS (SELECT 1 FROM user_blocks b
                                   WHERE b.app_id = u.app_id AND b.blocker_id = u.id AND b.blocked_id = \(callerId))
                 ORDER BY lower(u.nickname) COLLATE "C", u.id COLLATE "C"
                 LIMIT \(query.limit + 1))
            ) found
            ORDER BY rank, sort_key COLLATE "C", id COLLATE "C"
            LIMIT \(query.limit + 1)
            """
    }
}
