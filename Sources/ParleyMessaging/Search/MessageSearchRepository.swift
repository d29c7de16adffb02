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
/// above the caller's clear point, never revoked (migrations/0031 explains the terms, 0037 and 0039 the index that
/// `MessageSearchIndexer` keeps beside the messages).
struct MessageSearchRepository: Sendable {
    let database: PostgresClient

    func search(_ query: MessageSearchQuery, appId: Int64, userId: String) async throws -> MessageSearchPage {
        let rows = try await database.query(Self.statement(query, appId: appId, userId: userId))
        var found: [(message: IMMessage, cursor: MessageSearchCursor)] = []
        for row in rows {
            found.append(
                (
                    try MessageRepository.decode(row),
                    MessageSearchCursor(createdAtMicroseconds: try row.decode("created_us"), id: try row.decode("id"))
                ))
        }
        // Newest first, as the candidates were read (the statement leaves the order to its nested loop).
        found.sort { ($0.cursor.createdAtMicroseconds, $0.cursor.id) > ($1.cursor.createdAtMicroseconds, $1.cursor.id) }
        let page = found.prefix(query.limit)
        let hasMore = found.count > query.limit
        return MessageSearchPage(
            messages: page.map(\.message), nextCursor: hasMore ? page.last?.cursor.description : nil, hasMore: hasMore)
    }

    /// Up to `limit + 1` messages (one more tells whether there is another page), in the candidates' order. The
    /// index scan is fenced off (MATERIALIZED); its query names the caller's conversations in every lexeme, and the app
    /// is checked beside it, so it returns only messages the caller may be shown (cleared history, messages deleted for
    /// the caller and the cursor are filtered next, on the columns `message_search` keeps, newest first). Messages are
    /// then read by id, one candidate after another, until the page is full: the lateral lookup (OFFSET 0 keeps it
    /// per row) is a nested loop over the ordered candidates, so the LIMIT stops it early, and no sort above it makes
    /// it read every candidate first (`search` orders the page again).
    static func statement(_ query: MessageSearchQuery, appId: Int64, userId: String) -> PostgresQuery {
        let q = query.text
        let before = query.before
        return """
            WITH readable AS MATERIALIZED (
                SELECT cm.conversation_id, cm.clear_seq FROM conversation_members cm
                WHERE cm.app_id = \(appId) AND cm.user_id = \(userId)
                  AND (\(query.conversationId)::text IS NULL OR cm.conversation_id = \(query.conversationId))),
            found AS MATERIALIZED (
                SELECT s.message_id, s.conversation_id, s.seq, s.created_at FROM message_search s
                WHERE s.vector @@ ANY (parley_search_queries(\(q), (SELECT array_agg(conversation_id) FROM readable)))
                  AND s.app_id = \(appId)),
            candidates AS MATERIALIZED (
                SELECT f.message_id, f.created_at FROM found f JOIN readable r ON r.conversation_id = f.conversation_id
                WHERE f.seq > r.clear_seq
                  AND NOT EXISTS (SELECT 1 FROM message_hidden h
                                  WHERE h.app_id = \(appId) AND h.user_id = \(userId) AND h.message_id = f.message_id)
                  AND (\(before?.createdAtMicroseconds)::bigint IS NULL
                       OR (f.created_at, f.message_id) < (timestamptz 'epoch' + \(before?.createdAtMicroseconds)::bigint
                                                              * interval '1 microsecond', \(before?.id)::bigint))
                ORDER BY f.created_at DESC, f.message_id DESC)
            SELECT m.*, (extract(epoch FROM c.created_at) * 1000000)::bigint AS created_us
            FROM candidates c
            CROSS JOIN LATERAL (
                SELECT \(unescaped: MessageRepository.qualifiedColumns) FROM messages m
                WHERE m.id = c.message_id AND m.app_id = \(appId) AND m.revoked_at IS NULL
                OFFSET 0) m
            WHERE parley_search_exact(\(q))
               OR parley_search_recheck(parley_message_search_text(m.msg_type, m.content), \(q))
            LIMIT \(query.limit + 1)
            """
    }
}
