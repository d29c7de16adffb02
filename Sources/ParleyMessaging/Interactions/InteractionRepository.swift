import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyPostgres

/// Reactions, pins and messages deleted for oneself (migrations/0033).
struct InteractionRepository: Sendable {
    let database: PostgresClient

    /// A message as one member may act on it, read with its row locked against a racing revoke.
    struct Target: Sendable {
        var message: IMMessage
        var membership: Membership
        /// The member deleted it for themselves.
        var hidden: Bool
    }

    /// The message if `userId` is a member of its conversation, locked until the transaction ends (a revoke waits, so
    /// a reaction or pin is never added to a message revoked meanwhile); nil when there is no such message or the user
    /// is not a member.
    func lockTarget(on connection: PostgresConnection, appId: Int64, messageId: Int64, userId: String) async throws
        -> Target?
    {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: MessageRepository.qualifiedColumns), \(unescaped: Membership.columns(prefix: "cm.")),
                   EXISTS (SELECT 1 FROM message_hidden h
                           WHERE h.app_id = m.app_id AND h.user_id = \(userId) AND h.message_id = m.id) AS hidden
            FROM messages m
            JOIN conversation_members cm
              ON cm.app_id = m.app_id AND cm.conversation_id = m.conversation_id AND cm.user_id = \(userId)
            WHERE m.app_id = \(appId) AND m.id = \(messageId)
            FOR NO KEY UPDATE OF m
            """)
        guard let row = rows.first else { return nil }
        return Target(
            message: try MessageRepository.decode(row), membership: try Membership.decode(row),
            hidden: try row.decode("hidden"))
    }

    // MARK: Reactions

    /// Adds the user's reaction; false when it was there already. Refuses past the limits (1141).
    func addReaction(on connection: PostgresConnection, appId: Int64, messageId: Int64, emoji: String, userId: String)
        async throws -> Bool
    {
        let rows = try await connection.query(
            """
            SELECT EXISTS (SELECT 1 FROM message_reactions
                           WHERE message_id = \(messageId) AND emoji = \(emoji) AND user_id = \(userId)) AS present,
                   (SELECT count(DISTINCT emoji) FROM message_reactions WHERE message_id = \(messageId)) AS emojis,
                   EXISTS (SELECT 1 FROM message_reactions
                           WHERE message_id = \(messageId) AND emoji = \(emoji)) AS emoji_used,
                   (SELECT count(*) FROM message_reactions
                    WHERE message_id = \(messageId) AND user_id = \(userId)) AS mine
            """)
        let row = rows[0]
        if try row.decode("present", as: Bool.self) { return false }
        let emojiUsed = try row.decode("emoji_used", as: Bool.self)
        let emojis = try row.decode("emojis", as: Int.self)
        let mine = try row.decode("mine", as: Int.self)
        guard emojiUsed || emojis < MessageInteractions.maxEmojisPerMessage,
            mine < MessageInteractions.maxReactionsPerUser
        else { throw APIError.reactionLimitReached }
        _ = try await connection.query(
            """
            INSERT INTO message_reactions (app_id, message_id, emoji, user_id)
            VALUES (\(appId), \(messageId), \(emoji), \(userId))
            """)
        return true
    }

    /// Removes the user's reaction; false when there was none.
    func removeReaction(on connection: PostgresConnection, messageId: Int64, emoji: String, userId: String)
        async throws -> Bool
    {
        !(try await connection.query(
            """
            DELETE FROM message_reactions WHERE message_id = \(messageId) AND emoji = \(emoji) AND user_id = \(userId)
            RETURNING 1
            """
        ).isEmpty)
    }

    /// Each message's reactions as `viewer` sees them, emojis in the order they first appeared; messages without any
    /// are left out.
    func reactions(messageIds: [Int64], viewer: String, on connection: PostgresConnection? = nil) async throws
        -> [Int64: [MessageReaction]]
    {
        guard !messageIds.isEmpty else { return [:] }
        let query: PostgresQuery = """
            SELECT message_id, emoji, count(*) AS total, bool_or(user_id = \(viewer)) AS mine
            FROM message_reactions
            WHERE message_id = ANY(\(PostgresTextArray(messageIds.map(String.init)))::bigint[])
            GROUP BY message_id, emoji
            ORDER BY message_id, min(created_at), emoji
            """
        let rows = try await database.query(query, on: connection)
        var byMessage: [Int64: [MessageReaction]] = [:]
        for row in rows {
            byMessage[try row.decode("message_id"), default: []].append(
                MessageReaction(
                    emoji: try row.decode("emoji"), count: try row.decode("total"), me: try row.decode("mine")))
        }
        return byMessage
    }

    /// Sets each message's `reactions` as `viewer` sees them (an empty list when it has none).
    func attachReactions(_ messages: inout [IMMessage], viewer: String) async throws {
        let reactions = try await reactions(messageIds: messages.map(\.numericID), viewer: viewer)
        for index in messages.indices { messages[index].reactions = reactions[messages[index].numericID] ?? [] }
    }

    /// Whether the user deleted the message for themselves.
    func isHidden(appId: Int64, userId: String, messageId: Int64) async throws -> Bool {
        !(try await database.query(
            """
            SELECT 1 FROM message_hidden WHERE app_id = \(appId) AND user_id = \(userId) AND message_id = \(messageId)
            """
        ).isEmpty)
    }

    // MARK: Pins

    /// Pins the message; nil when it was pinned already (the existing pin's time), refusing past the limit (1142).
    func pin(
        on connection: PostgresConnection, appId: Int64, conversationId: String, messageId: Int64, by userId: String
    )
        async throws -> (pinnedAt: Date, created: Bool)
    {
        // The conversation's row is locked so that two racing pins cannot both pass the limit.
        let rows = try await connection.query(
            """
            WITH locked AS (
                SELECT 1 FROM conversations WHERE app_id = \(appId) AND id = \(conversationId) FOR NO KEY UPDATE)
            SELECT (SELECT pinned_at FROM conversation_pins
                    WHERE app_id = \(appId) AND conversation_id = \(conversationId)
                      AND message_id = \(messageId)) AS existing,
                   (SELECT count(*) FROM conversation_pins
                    WHERE app_id = \(appId) AND conversation_id = \(conversationId)) AS pins
            FROM locked
            """)
        guard let row = rows.first else { throw APIError.conversationNotFound }
        if let existing = try row.decode("existing", as: Date?.self) { return (existing, false) }
        guard try row.decode("pins", as: Int.self) < MessageInteractions.maxPins else { throw APIError.pinLimitReached }
        let inserted = try await connection.query(
            """
            INSERT INTO conversation_pins (app_id, conversation_id, message_id, pinned_by)
            VALUES (\(appId), \(conversationId), \(messageId), \(userId))
            RETURNING pinned_at
            """)
        return (try inserted[0].decode("pinned_at"), true)
    }

    /// Unpins the message; false when it was not pinned.
    func unpin(on connection: PostgresConnection, appId: Int64, conversationId: String, messageId: Int64)
        async throws -> Bool
    {
        !(try await connection.query(
            """
            DELETE FROM conversation_pins
            WHERE app_id = \(appId) AND conversation_id = \(conversationId) AND message_id = \(messageId)
            RETURNING 1
            """
        ).isEmpty)
    }

    /// The conversation's pinned messages the user may see (after their clear point, not deleted for them), newest pin
    /// first.
    func pins(appId: Int64, conversationId: String, visibleAfter: Int64, userId: String) async throws
        -> [PinnedMessage]
    {
        try await database.query(
            """
            SELECT \(unescaped: MessageRepository.qualifiedColumns), p.pinned_by, p.pinned_at
            FROM conversation_pins p JOIN messages m ON m.id = p.message_id
            WHERE p.app_id = \(appId) AND p.conversation_id = \(conversationId) AND m.seq > \(visibleAfter)
              AND NOT EXISTS (SELECT 1 FROM message_hidden h
                              WHERE h.app_id = p.app_id AND h.user_id = \(userId) AND h.message_id = m.id)
            ORDER BY p.pinned_at DESC, p.message_id DESC
            """
        ).map { row in
            PinnedMessage(
                message: try MessageRepository.decode(row), pinnedBy: try row.decode("pinned_by"),
                pinnedAt: try row.decode("pinned_at"))
        }
    }

    // MARK: Delete for me

    /// Hides the message from the user's own history; false when it was hidden already.
    func hide(on connection: PostgresConnection, appId: Int64, userId: String, messageId: Int64) async throws -> Bool {
        !(try await connection.query(
            """
            INSERT INTO message_hidden (app_id, user_id, message_id) VALUES (\(appId), \(userId), \(messageId))
            ON CONFLICT DO NOTHING
            RETURNING 1
            """
        ).isEmpty)
    }
}
