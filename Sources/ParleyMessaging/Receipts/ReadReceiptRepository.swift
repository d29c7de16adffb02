import ParleyPostgres

/// Who read a message, from the members' read points (no row per reader and message: a member has read every message
/// up to their `read_seq`). Members who joined after the message (it is before their clear point) are not counted.
struct ReadReceiptRepository: Sendable {
    let database: PostgresClient

    /// Groups larger than this get no read receipts: counting readers walks the members of each message.
    static let maxGroupMembers = 200

    /// A message's read and unread counts (the sender aside).
    func counts(appId: Int64, message: IMMessage) async throws -> (read: Int64, unread: Int64, members: Int) {
        let row = try await database.query(
            """
            SELECT count(*) FILTER (WHERE cm.read_seq >= \(message.seq)) AS read,
                   count(*) FILTER (WHERE cm.read_seq < \(message.seq)) AS unread,
                   (SELECT count(*) FROM conversation_members a
                    WHERE a.app_id = \(appId) AND a.conversation_id = \(message.conversationId)) AS members
            FROM conversation_members cm
            WHERE cm.app_id = \(appId) AND cm.conversation_id = \(message.conversationId)
              AND cm.user_id <> \(message.fromId) AND cm.clear_seq < \(message.seq)
            """)[0]
        return (try row.decode("read"), try row.decode("unread"), try row.decode("members"))
    }

    /// Readers of a message in user id order, after `cursor` (a user id), `limit + 1` fetched for `hasMore`.
    func readers(appId: Int64, message: IMMessage, after cursor: String?, limit: Int) async throws -> [String] {
        try await database.query(
            """
            SELECT cm.user_id FROM conversation_members cm
            WHERE cm.app_id = \(appId) AND cm.conversation_id = \(message.conversationId)
              AND cm.user_id <> \(message.fromId) AND cm.clear_seq < \(message.seq) AND cm.read_seq >= \(message.seq)
              AND (\(cursor)::text IS NULL OR cm.user_id COLLATE "C" > \(cursor)::text COLLATE "C")
            ORDER BY cm.user_id COLLATE "C"
            LIMIT \(limit + 1)
            """
        ).map { try $0.decode("user_id") }
    }

    /// A changed read count: a message of a group's member, readers counted now.
    struct Update: Sendable, Hashable {
        var appId: Int64
        var conversationId: String
        var messageId: String
        var seq: Int64
        var senderId: String
        var readCount: Int64
    }

    /// The read counts of the messages in each range `(after, through]` (the newest `perConversation` of each),
    /// in groups of at most `maxGroupMembers`: what readers' read marks changed. Notify and revoked messages have
    /// none.
    func updates(_ ranges: [(appId: Int64, conversationId: String, after: Int64, through: Int64)], perConversation: Int)
        async throws -> [Update]
    {
        guard !ranges.isEmpty else { return [] }
        return try await database.query(
            """
            SELECT r.app_id, r.conversation_id, m.id, m.seq, m.from_id,
                   (SELECT count(*) FROM conversation_members cm
                    WHERE cm.app_id = m.app_id AND cm.conversation_id = m.conversation_id AND cm.user_id <> m.from_id
                      AND cm.clear_seq < m.seq AND cm.read_seq >= m.seq) AS read_count
            FROM unnest(\(PostgresTextArray(ranges.map { String($0.appId) }))::bigint[],
                        \(PostgresTextArray(ranges.map(\.conversationId)))::text[],
                        \(PostgresTextArray(ranges.map { String($0.after) }))::bigint[],
                        \(PostgresTextArray(ranges.map { String($0.through) }))::bigint[])
                 AS r(app_id, conversation_id, after_seq, through_seq)
            JOIN conversations c ON c.app_id = r.app_id AND c.id = r.conversation_id
            JOIN groups g ON g.app_id = c.app_id AND g.id = c.group_id AND g.member_count <= \(Self.maxGroupMembers)
            CROSS JOIN LATERAL (
                SELECT m.* FROM messages m
                WHERE m.app_id = r.app_id AND m.conversation_id = r.conversation_id
                  AND m.seq > greatest(r.after_seq, r.through_seq - \(perConversation)) AND m.seq <= r.through_seq
                  AND m.msg_type <> 'notify' AND m.revoked_at IS NULL) m
            ORDER BY r.conversation_id, m.seq
            """
        ).map { row in
            Update(
                appId: try row.decode("app_id"), conversationId: try row.decode("conversation_id"),
                messageId: String(try row.decode("id", as: Int64.self)), seq: try row.decode("seq"),
                senderId: try row.decode("from_id"), readCount: try row.decode("read_count"))
        }
    }
}
