import Foundation
import ParleyPostgres

/// Group bans (migrations/0038).
extension GroupRepository {
    /// Bans the user; the existing ban when there was one already.
    func ban(on connection: PostgresConnection, appId: Int64, groupId: String, userId: String, by operatorId: String)
        async throws -> GroupBan
    {
        let rows = try await connection.query(
            """
            WITH inserted AS (
                INSERT INTO group_bans (app_id, group_id, user_id, banned_by)
                VALUES (\(appId), \(groupId), \(userId), \(operatorId))
                ON CONFLICT DO NOTHING
                RETURNING user_id, banned_by, banned_at)
            SELECT * FROM inserted
            UNION ALL
            SELECT user_id, banned_by, banned_at FROM group_bans
            WHERE app_id = \(appId) AND group_id = \(groupId) AND user_id = \(userId) AND NOT EXISTS (SELECT 1 FROM inserted)
            """)
        return try GroupBan.decode(rows[0])
    }

    /// Lifts the bans of `userIds`; the ids that were banned.
    @discardableResult
    func unban(on connection: PostgresConnection, appId: Int64, groupId: String, userIds: [String]) async throws
        -> [String]
    {
        try await connection.query(
            """
            DELETE FROM group_bans
            WHERE app_id = \(appId) AND group_id = \(groupId) AND user_id = ANY(\(PostgresTextArray(userIds))::text[])
            RETURNING user_id
            """
        ).map { try $0.decode("user_id") }
    }

    func isBanned(on connection: PostgresConnection, appId: Int64, groupId: String, userId: String) async throws
        -> Bool
    {
        !(try await connection.query(
            """
            SELECT 1 FROM group_bans WHERE app_id = \(appId) AND group_id = \(groupId) AND user_id = \(userId)
            """
        ).isEmpty)
    }

    /// A page of the group's bans, newest first.
    func bans(appId: Int64, groupId: String, offset: Int, limit: Int) async throws -> (bans: [GroupBan], hasMore: Bool)
    {
        var bans = try await database.query(
            """
            SELECT user_id, banned_by, banned_at FROM group_bans
            WHERE app_id = \(appId) AND group_id = \(groupId)
            ORDER BY banned_at DESC, user_id
            OFFSET \(offset) LIMIT \(limit + 1)
            """
        ).map { try GroupBan.decode($0) }
        let hasMore = bans.count > limit
        if hasMore { bans.removeLast() }
        return (bans, hasMore)
    }

    /// A deleted account's bans go with it.
    func deleteBans(on connection: PostgresConnection, appId: Int64, userId: String) async throws {
        _ = try await connection.query("DELETE FROM group_bans WHERE app_id = \(appId) AND user_id = \(userId)")
    }
}

/// A user banned from a group.
struct GroupBan: Sendable, Encodable {
    var userId: String
    var bannedBy: String
    var bannedAt: Date

    static func decode(_ row: PostgresRow) throws -> GroupBan {
        GroupBan(
            userId: try row.decode("user_id"), bannedBy: try row.decode("banned_by"),
            bannedAt: try row.decode("banned_at"))
    }
}

struct GroupBanPage: Encodable {
    var bans: [GroupBan]
    var hasMore: Bool
}
