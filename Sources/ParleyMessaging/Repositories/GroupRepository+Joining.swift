import Foundation
import ParleyPostgres

/// Join requests and public search. Writes run on the caller's transaction connection, with the group row locked.
extension GroupRepository {
    /// Opens `userId`'s request (a new row, or a rejected or accepted one again); answers it as stored. A pending
    /// request stays as it was (asking twice is one request).
    func openJoinRequest(
        on connection: PostgresConnection, appId: Int64, groupId: String, userId: String, message: String
    ) async throws -> (request: GroupJoinRequest, opened: Bool) {
        let rows = try await connection.query(
            """
            INSERT INTO group_join_requests AS r (app_id, group_id, user_id, message)
            VALUES (\(appId), \(groupId), \(userId), \(message))
            ON CONFLICT (app_id, group_id, user_id) DO UPDATE
                SET message = excluded.message, status = 'pending', created_at = now(), handled_at = NULL,
                    handled_by = NULL
                WHERE r.status <> 'pending'
            RETURNING \(unescaped: GroupJoinRequest.columns)
            """)
        if let row = rows.first { return (try GroupJoinRequest.decode(row), true) }
        guard let pending = try await joinRequest(on: connection, appId: appId, groupId: groupId, userId: userId)
        else { throw PostgresError(kind: .decoding, message: "join request vanished under the group's lock") }
        return (pending, false)
    }

    func joinRequest(on connection: PostgresConnection, appId: Int64, groupId: String, userId: String) async throws
        -> GroupJoinRequest?
    {
        try await connection.query(
            """
            SELECT \(unescaped: GroupJoinRequest.columns) FROM group_join_requests
            WHERE app_id = \(appId) AND group_id = \(groupId) AND user_id = \(userId)
            """
        ).first.map { try GroupJoinRequest.decode($0) }
    }

    func handleJoinRequest(
        on connection: PostgresConnection, appId: Int64, groupId: String, userId: String,
        status: GroupJoinRequest.Status, by operatorId: String
    ) async throws -> GroupJoinRequest {
        let rows = try await connection.query(
            """
            UPDATE group_join_requests SET status = \(status.rawValue), handled_at = now(), handled_by = \(operatorId)
            WHERE app_id = \(appId) AND group_id = \(groupId) AND user_id = \(userId)
            RETURNING \(unescaped: GroupJoinRequest.columns)
            """)
        return try GroupJoinRequest.decode(rows[0])
    }

    /// The pending requests, oldest first (`group_join_requests_pending`).
    func pendingJoinRequests(appId: Int64, groupId: String, offset: Int, limit: Int) async throws -> (
        requests: [GroupJoinRequest], hasMore: Bool
    ) {
        var requests = try await database.query(
            """
            SELECT \(unescaped: GroupJoinRequest.columns) FROM group_join_requests
            WHERE app_id = \(appId) AND group_id = \(groupId) AND status = 'pending'
            ORDER BY created_at, user_id
            OFFSET \(offset) LIMIT \(limit + 1)
            """
        ).map { try GroupJoinRequest.decode($0) }
        let hasMore = requests.count > limit
        if hasMore { requests.removeLast() }
        return (requests, hasMore)
    }

    /// A deleted account's requests go (pending ones no longer wait for an answer).
    func deleteJoinRequests(on connection: PostgresConnection, appId: Int64, userId: String) async throws {
        _ = try await connection.query(
            "DELETE FROM group_join_requests WHERE app_id = \(appId) AND user_id = \(userId)")
    }

    /// The group's owner and admins (who handle join requests).
    func managers(on connection: PostgresConnection, appId: Int64, groupId: String) async throws -> [String] {
        try await connection.query(
            """
            SELECT user_id FROM conversation_members
            WHERE app_id = \(appId) AND conversation_id = \(ConversationID.group(groupId)) AND role <> 'member'
            ORDER BY user_id
            """
        ).map { try $0.decode("user_id", as: String.self) }
    }

    /// The groups of the app anyone may find (open or approval, not dissolved) whose id is `query` (first) or
    /// whose name starts with it, case-insensitively; the name branch reads `groups_name_search` in order.
    func searchPublic(appId: Int64, query: String, offset: Int, limit: Int) async throws -> (
        groups: [PublicGroup], hasMore: Bool
    ) {
        let rows = try await database.query(
            """
            SELECT * FROM (
                (SELECT 0 AS rank, id, name, avatar_key, introduction, member_count, join_policy, '' AS sort_key
                 FROM groups
                 WHERE app_id = \(appId) AND id = \(query) AND join_policy <> 'invite_only' AND dissolved_at IS NULL)
                UNION ALL
                -- The names that start with lower(q) are one range in byte order (see users_nickname_search).
                (SELECT 1, id, name, avatar_key, introduction, member_count, join_policy, lower(name) COLLATE "C"
                 FROM groups
                 WHERE app_id = \(appId) AND join_policy <> 'invite_only' AND dissolved_at IS NULL
                   AND lower(name) COLLATE "C" >= lower(\(query)::text) COLLATE "C"
                   AND lower(name) COLLATE "C" < (
                       CASE ascii(right(lower(\(query)::text), 1))
                           WHEN 1114111 THEN lower(\(query)::text) || repeat(chr(1114111), 256)
                           WHEN 55295 THEN left(lower(\(query)::text), -1) || chr(57344)
                           ELSE left(lower(\(query)::text), -1) || chr(ascii(right(lower(\(query)::text), 1)) + 1)
                       END) COLLATE "C"
                   AND id <> \(query)
                 ORDER BY lower(name) COLLATE "C", id COLLATE "C"
                 LIMIT \(offset + limit + 1))
            ) found
            ORDER BY rank, sort_key COLLATE "C", id COLLATE "C"
            OFFSET \(offset) LIMIT \(limit + 1)
            """)
        var groups = try rows.map { row in
            PublicGroup(
                groupId: try row.decode("id"), name: try row.decode("name"), avatarKey: try row.decode("avatar_key"),
                introduction: try row.decode("introduction"), memberCount: try row.decode("member_count"),
                joinPolicy: GroupJoinPolicy(rawValue: try row.decode("join_policy", as: String.self)) ?? .open)
        }
        let hasMore = groups.count > limit
        if hasMore { groups.removeLast() }
        return (groups, hasMore)
    }
}
