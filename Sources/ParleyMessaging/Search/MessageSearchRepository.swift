import ParleyPostgres

/// A page of message search: messages in history's shape, newest first.
struct MessageSearchPage: Sendable, Encodable {
    var messages: [IMMessage]
    /// The `cursor` of the next page; nil on the last.
    var nextCursor: String?
    var hasMore: Bool

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(messages, forKey: .messages)
        try container.encode(nextCursor, forKey: .nextCursor) // explicit null: the last page says so
        try container.encode(hasMore, forKey: .hasMore)
    }

    enum CodingKeys: String, CodingKey { case messages, nextCursor, hasMore }
}

/// Finds the text and richText messages that hold every piece of `q`, in the conversations the caller belongs to,
/// above the caller's clear point, never revoked (migrations/0031 explains the terms, 0037 the index that
/// `MessageSearchIndexer` keeps beside the messages).
struct MessageSearchRepository: Sendable {
    let database: PostgresClient

    func search(_ query: MessageSearchQuery, appId: Int64, userId: String) async throws -> MessageSearchPage {
        let rows = try await database.query(Self.statement(query, appId: appId, userId: userId))
        var messages: [IMMessage] = []
        var last: MessageSearchCursor?
        for row in rows.prefix(query.limit) {
            messages.append(try MessageRepository.decode(row))
            last = MessageSearchCursor(createdAtMicroseconds: try row.decode("created_us"), id: try row.decode("id"))
        }
        let hasMore = rows.count > query.limit
        return MessageSearchPage(messages: messages, nextCursor: hasMore ? last?.description : nil, hasMore: hasMore)
    }

    /// Up to `limit + 1` messages (one more tells whether there is another page). The index scan is fenced off
    /// (MATERIALIZED) so that the planner never trades it for walking the caller's conversations and tokenizing every
    /// message; its query names the caller's conversations in every lexeme, so it returns only messages the caller
    /// may be shown (cleared history and messages deleted for the caller aside, filtered next).
    static func statement(_ query: MessageSearchQuery, appId: Int64, userId: String) -> PostgresQuery {
        let q = query.text
        let before = query.before
        return """
            WITH readable AS MATERIALIZED (
                SELECT cm.conversation_id, cm.clear_seq FROM conversation_members cm
                WHERE cm.app_id = \(appId) AND cm.user_id = \(userId)
                  AND (\(query.conversationId)::text IS NULL OR cm.conversation_id = \(query.conversationId))),
            found AS MATERIALIZED (
                SELECT \(unescaped: MessageRepository.qualifiedColumns)
                FROM message_search s JOIN messages m ON m.id = s.message_id
                WHERE s.vector @@ ANY (parley_search_queries(\(q), (SELECT array_agg(conversation_id) FROM readable)))
                  AND m.app_id = \(appId) AND m.revoked_at IS NULL)
            SELECT f.*, (extract(epoch FROM f.created_at) * 1000000)::bigint AS created_us
            FROM found f JOIN readable r ON r.conversation_id = f.conversation_id
            WHERE f.seq > r.clear_seq
              AND NOT EXISTS (SELECT 1 FROM message_hidden h
                              WHERE h.app_id = \(appId) AND h.user_id = \(userId) AND h.message_id = f.id)
              AND (\(before?.createdAtMicroseconds)::bigint IS NULL
                   OR (f.created_at, f.id) < (timestamptz 'epoch' + \(before?.createdAtMicroseconds)::bigint
                                                  * interval '1 microsecond', \(before?.id)::bigint))
              AND (parley_search_exact(\(q))
                   OR parley_search_recheck(parley_message_search_text(f.msg_type, f.content), \(q)))
            ORDER BY f.created_at DESC, f.id DESC
            LIMIT \(query.limit + 1)
            """
    }
}
