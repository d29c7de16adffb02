import Foundation
import ParleyJSON
import ParleyPostgres

/// Groups and their members. Writes run on the caller's transaction connection so that the change and its
/// notify message commit together.
struct GroupRepository: Sendable {
    let database: PostgresClient

    static let columns = """
        id, name, avatar_key, owner_id, member_count, dissolved_at, created_at, muted_all, announcement,
        introduction, ex, join_policy
        """

    /// `columns` of the table as `g`.
    static let qualifiedColumns = columns.split(separator: ",")
        .map { "g." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", ")

    static func decode(_ row: PostgresRow) throws -> GroupInfo {
        let id = try row.decode("id", as: String.self)
        return GroupInfo(
            groupId: id, conversationId: ConversationID.group(id), name: try row.decode("name"),
            avatarKey: try row.decode("avatar_key"), ownerId: try row.decode("owner_id"),
            memberCount: try row.decode("member_count"), dissolved: !row.isNull("dissolved_at"),
            createdAt: try row.decode("created_at"), mutedAll: try row.decode("muted_all"),
            announcement: try row.decode("announcement"), introduction: try row.decode("introduction"),
            ex: try row.decode("ex", as: String?.self).map { try JSONValue.parse($0) },
            joinPolicy: GroupJoinPolicy(rawValue: try row.decode("join_policy", as: String.self)) ?? .inviteOnly)
    }

    func find(appId: Int64, groupId: String) async throws -> GroupInfo? {
        try await database.query(
            "SELECT \(unescaped: Self.columns) FROM groups WHERE app_id = \(appId) AND id = \(groupId)"
        )
        .first.map { try Self.decode($0) }
    }

    func find(on connection: PostgresConnection, appId: Int64, groupId: String) async throws -> GroupInfo? {
        try await connection.query(
            "SELECT \(unescaped: Self.columns) FROM groups WHERE app_id = \(appId) AND id = \(groupId)"
        )
        .first.map { try Self.decode($0) }
    }

    /// The groups `userId` is a member of (dissolved ones and those whose conversation they deleted included), in
    /// conversation id order after `cursor`'s group: the primary key's order, so a page reads only its own rows.
    func groups(of userId: String, appId: Int64, after cursor: String?, limit: Int) async throws -> (
        groups: [GroupInfo], hasMore: Bool
    ) {
        let after = cursor.map(ConversationID.group) ?? "sg:"
        var groups = try await database.query(
            """
            SELECT \(unescaped: Self.qualifiedColumns)
            FROM conversation_members cm
            JOIN groups g ON g.app_id = cm.app_id AND cm.conversation_id = 'sg:' || g.id
            WHERE cm.app_id = \(appId) AND cm.user_id = \(userId) AND cm.conversation_id LIKE 'sg:%'
              AND cm.conversation_id > \(after)
            ORDER BY cm.conversation_id
            LIMIT \(limit + 1)
            """
        ).map { try Self.decode($0) }
        let hasMore = groups.count > limit
        if hasMore { groups.removeLast() }
        return (groups, hasMore)
    }

    /// Mutes a member until `until` (nil: unmutes).
    func setMutedUntil(
        on connection: PostgresConnection, appId: Int64, groupId: String, userId: String, until: Date?
    ) async throws {
        _ = try await connection.query(
            """
            UPDATE conversation_members SET muted_until = \(until)
            WHERE app_id = \(appId) AND user_id = \(userId) AND conversation_id = \(ConversationID.group(groupId))
            """)
    }

    func setMutedAll(on connection: PostgresConnection, appId: Int64, groupId: String, muted: Bool) async throws {
        _ = try await connection.query(
            """
            UPDATE groups SET muted_all = \(muted), updated_at = now() WHERE app_id = \(appId) AND id = \(groupId)
            """)
    }

    /// Locks the group row for the rest of the transaction (serializes member changes and the member count).
    func lock(on connection: PostgresConnection, appId: Int64, groupId: String) async throws -> GroupInfo? {
        try await connection.query(
            """
            SELECT \(unescaped: Self.columns) FROM groups WHERE app_id = \(appId) AND id = \(groupId) FOR UPDATE
            """
        ).first.map { try Self.decode($0) }
    }

    func insert(
        on connection: PostgresConnection, appId: Int64, groupId: String, name: String, avatarKey: String?,
        ownerId: String, joinPolicy: GroupJoinPolicy
    ) async throws -> GroupInfo {
        let conversationId = ConversationID.group(groupId)
        _ = try await connection.query(
            """
            INSERT INTO conversations (app_id, id, chat_type, group_id) VALUES (\(appId), \(conversationId), 'group', \(groupId))
            """)
        let rows = try await connection.query(
            """
            INSERT INTO groups (app_id, id, name, avatar_key, owner_id, join_policy)
            VALUES (\(appId), \(groupId), \(name), \(avatarKey), \(ownerId), \(joinPolicy.rawValue))
            RETURNING \(unescaped: Self.columns)
            """)
        return try Self.decode(rows[0])
    }

    /// Of `userIds`, those that exist in the app.
    func existingUsers(on connection: PostgresConnection, appId: Int64, userIds: [String]) async throws -> Set<String> {
        let rows = try await connection.query(
            """
            SELECT id FROM users WHERE app_id = \(appId) AND id = ANY(\(PostgresTextArray(userIds))::text[])
            """)
        return Set(try rows.map { try $0.decode("id", as: String.self) })
    }

    /// Adds members who see history from now on; returns the ids actually added (existing members are skipped)
    /// and updates the member count.
    func addMembers(
        on connection: PostgresConnection, appId: Int64, groupId: String, userIds: [String],
        role: GroupRole = .member
    ) async throws -> [String] {
        let conversationId = ConversationID.group(groupId)
        let rows = try await connection.query(
            """
            WITH added AS (
                INSERT INTO conversation_members (app_id, user_id, conversation_id, role, read_seq, clear_seq)
                SELECT \(appId), u, \(conversationId), \(role.rawValue), c.last_seq, c.last_seq
                FROM unnest(\(PostgresTextArray(userIds))::text[]) AS u,
                     conversations c WHERE c.app_id = \(appId) AND c.id = \(conversationId)
                ON CONFLICT DO NOTHING
                RETURNING user_id),
            counted AS (
                UPDATE groups SET member_count = member_count + (SELECT count(*) FROM added), updated_at = now()
                WHERE app_id = \(appId) AND id = \(groupId))
            SELECT user_id FROM added
            """)
        return try rows.map { try $0.decode("user_id", as: String.self) }
    }

    func removeMember(on connection: PostgresConnection, appId: Int64, groupId: String, userId: String) async throws {
        _ = try await connection.query(
            """
            WITH removed AS (
                DELETE FROM conversation_members
                WHERE app_id = \(appId) AND user_id = \(userId) AND conversation_id = \(ConversationID.group(groupId))
                RETURNING user_id)
            UPDATE groups SET member_count = member_count - (SELECT count(*) FROM removed), updated_at = now()
            WHERE app_id = \(appId) AND id = \(groupId)
            """)
    }

    func member(appId: Int64, groupId: String, userId: String) async throws -> Membership? {
        try await database.withConnection { connection in
            try await member(on: connection, appId: appId, groupId: groupId, userId: userId)
        }
    }

    func member(on connection: PostgresConnection, appId: Int64, groupId: String, userId: String) async throws
        -> Membership?
    {
        try await connection.query(
            """
            SELECT \(unescaped: Membership.columns(prefix: "")) FROM conversation_members
            WHERE app_id = \(appId) AND user_id = \(userId) AND conversation_id = \(ConversationID.group(groupId))
            """
        ).first.map { try Membership.decode($0) }
    }

    func setRole(on connection: PostgresConnection, appId: Int64, groupId: String, userId: String, role: GroupRole)
        async throws
    {
        _ = try await connection.query(
            """
            UPDATE conversation_members SET role = \(role.rawValue)
            WHERE app_id = \(appId) AND user_id = \(userId) AND conversation_id = \(ConversationID.group(groupId))
            """)
        if role == .owner {
            _ = try await connection.query(
                """
                UPDATE groups SET owner_id = \(userId), updated_at = now() WHERE app_id = \(appId) AND id = \(groupId)
                """)
        }
    }

    func setBlocked(on connection: PostgresConnection, appId: Int64, groupId: String, userId: String, blocked: Bool)
        async throws
    {
        _ = try await connection.query(
            """
            UPDATE conversation_members SET blocked = \(blocked)
            WHERE app_id = \(appId) AND user_id = \(userId) AND conversation_id = \(ConversationID.group(groupId))
            """)
    }

    /// Sets the fields `change` names (the avatar key already checked); the others stay.
    func updateProfile(
        on connection: PostgresConnection, appId: Int64, groupId: String, change: GroupProfileChange,
        avatarKey: String??
    ) async throws {
        let setAvatar = avatarKey != nil
        let setEx = change.ex != nil
        let ex = (change.ex ?? nil).map(\.serializedString)
        _ = try await connection.query(
            """
            UPDATE groups SET name = coalesce(\(change.name)::text, name),
                              avatar_key = CASE WHEN \(setAvatar) THEN \(avatarKey ?? nil)::text ELSE avatar_key END,
                              announcement = coalesce(\(change.announcement)::text, announcement),
                              introduction = coalesce(\(change.introduction)::text, introduction),
                              ex = CASE WHEN \(setEx) THEN \(ex)::text ELSE ex END,
                              join_policy = coalesce(\(change.joinPolicy?.rawValue)::text, join_policy),
                              updated_at = now()
            WHERE app_id = \(appId) AND id = \(groupId)
            """)
    }

    func markDissolved(on connection: PostgresConnection, appId: Int64, groupId: String) async throws {
        _ = try await connection.query(
            """
            UPDATE groups SET dissolved_at = now(), updated_at = now() WHERE app_id = \(appId) AND id = \(groupId)
            """)
    }

    /// The groups `userId` is a member of that are not dissolved, in id order (the order deletion locks them in).
    func activeGroups(on connection: PostgresConnection, appId: Int64, userId: String) async throws -> [String] {
        try await connection.query(
            """
            SELECT g.id FROM conversation_members cm
            JOIN groups g ON g.app_id = cm.app_id AND 'sg:' || g.id = cm.conversation_id
            WHERE cm.app_id = \(appId) AND cm.user_id = \(userId) AND cm.conversation_id LIKE 'sg:%'
              AND g.dissolved_at IS NULL
            ORDER BY g.id
            """
        ).map { try $0.decode("id", as: String.self) }
    }

    /// Who inherits a group its owner leaves for good: the longest-standing admin, else the longest-standing
    /// member (members the group muted come after the others); nil when nobody else is left.
    func heir(on connection: PostgresConnection, appId: Int64, groupId: String, leaving userId: String) async throws
        -> String?
    {
        try await connection.query(
            """
            SELECT user_id FROM conversation_members
            WHERE app_id = \(appId) AND conversation_id = \(ConversationID.group(groupId)) AND user_id <> \(userId)
            ORDER BY role = 'admin' DESC, blocked, joined_at, user_id
            LIMIT 1
            """
        ).first.map { try $0.decode("user_id", as: String.self) }
    }

    /// A change only `userId` sees in sync (they can no longer see the conversation's own changes).
    func recordMembershipChange(
        on connection: PostgresConnection, appId: Int64, groupId: String, userId: String,
        payload: String
    ) async throws {
        _ = try await connection.query(
            """
            INSERT INTO changes (app_id, conversation_id, user_id, kind, payload)
            VALUES (\(appId), \(ConversationID.group(groupId)), \(userId), 'membership', \(payload))
            """)
    }

    /// The member order's first key; the same expression as `conversation_members_group_order`'s.
    static let memberRank = "(CASE cm.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END)"

    /// A page of members in the list's order, `offset` rows after `cursor` (or the start): the page's rows are read
    /// from `conversation_members_group_order` in order (a cursor skips straight to them), and only they are joined
    /// with their users.
    func members(appId: Int64, groupId: String, after cursor: MemberCursor?, offset: Int, limit: Int) async throws
        -> (members: [GroupMember], next: MemberCursor?)
    {
        let conversationId = ConversationID.group(groupId)
        // Without a cursor the row comparison is `false OR ...` with bound constants: the planner drops it.
        let rows = try await database.query(
            """
            SELECT p.*, u.nickname, u.avatar
            FROM (SELECT cm.app_id, cm.user_id, cm.role, cm.blocked, cm.joined_at, cm.muted_until,
                         \(unescaped: Self.memberRank) AS rank,
                         (extract(epoch FROM cm.joined_at) * 1000000)::bigint AS joined_us
                  FROM conversation_members cm
                  WHERE cm.app_id = \(appId) AND cm.conversation_id = \(conversationId) AND cm.peer_id IS NULL
                    AND (\(cursor == nil) OR (\(unescaped: Self.memberRank), cm.joined_at, cm.user_id) > (
                        \(cursor?.rank ?? 0)::int,
                        'epoch'::timestamptz + \(cursor?.joinedMicroseconds ?? 0)::bigint * interval '1 microsecond',
                        \(cursor?.userId ?? "")::text))
                  ORDER BY \(unescaped: Self.memberRank), cm.joined_at, cm.user_id
                  OFFSET \(offset) LIMIT \(limit + 1)) p
            LEFT JOIN users u ON u.app_id = p.app_id AND u.id = p.user_id
            ORDER BY p.rank, p.joined_at, p.user_id
            """)
        var members: [GroupMember] = []
        var last: MemberCursor?
        for row in rows.prefix(limit) {
            members.append(
                GroupMember(
                    userId: try row.decode("user_id"),
                    role: GroupRole(rawValue: try row.decode("role", as: String.self)) ?? .member,
                    blocked: try row.decode("blocked"), nickname: try row.decode("nickname", as: String?.self) ?? "",
                    faceURL: try row.decode("avatar"), joinedAt: try row.decode("joined_at"),
                    mutedUntil: try row.decode("muted_until")))
            last = MemberCursor(
                rank: try row.decode("rank"), joinedMicroseconds: try row.decode("joined_us"),
                userId: try row.decode("user_id"))
        }
        return (members, rows.count > limit ? last : nil)
    }
}
