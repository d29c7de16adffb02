import Foundation
import ParleyJSON
import ParleyMessageModel
import ParleyPostgres

/// Conversations and each member's own view of them (pin, draft, mute, read point, clear point, deletion).
struct ConversationRepository: Sendable {
    let database: PostgresClient

    func membership(appId: Int64, conversationId: String, userId: String) async throws -> Membership? {
        try await database.query(
            """
            SELECT \(unescaped: Membership.columns(prefix: "")) FROM conversation_members
            WHERE app_id = \(appId) AND user_id = \(userId) AND conversation_id = \(conversationId)
            """
        ).first.map { try Membership.decode($0) }
    }

    func memberIDs(appId: Int64, conversationId: String) async throws -> [String] {
        try await database.query(
            """
            SELECT user_id FROM conversation_members WHERE app_id = \(appId) AND conversation_id = \(conversationId)
            """
        ).map { try $0.decode("user_id", as: String.self) }
    }

    /// Unread = messages after the read point that count (not notify, not `noUnread`), minus those of them revoked
    /// since. `counted_prefix` of the message at the read point makes this two index lookups whatever the number of
    /// unread messages.
    static let unreadExpression = """
        CASE WHEN c.last_seq <= greatest(cm.read_seq, cm.clear_seq) THEN 0 ELSE greatest(0,
            c.counted_total
            - coalesce((SELECT p.counted_prefix FROM messages p WHERE p.app_id = cm.app_id
                        AND p.conversation_id = cm.conversation_id AND p.seq = greatest(cm.read_seq, cm.clear_seq)), 0)
            - (SELECT count(*) FROM messages r WHERE r.app_id = cm.app_id AND r.conversation_id = cm.conversation_id
               AND r.seq > greatest(cm.read_seq, cm.clear_seq) AND r.revoked_at IS NOT NULL AND NOT r.uncounted)) END
        """

    /// The last message's columns as `lm_<name>`, for `MessageRepository.decode(_:prefix:)`.
    static let latestMessageColumns = MessageRepository.columns.split(separator: ",")
        .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.map { "lm.\($0) AS lm_\($0)" }
        .joined(separator: ", ")

    static let summarySelect = """
        SELECT cm.user_id AS member_id, cm.conversation_id, cm.peer_id, cm.is_pinned, cm.draft_text, cm.muted,
               cm.marked_unread,
               CASE WHEN cm.mention_seq > greatest(cm.read_seq, cm.clear_seq) THEN cm.mention_message_id END
                   AS mention_message_id,
               cm.read_seq, cm.clear_seq, c.chat_type, c.group_id, c.last_seq, c.last_message_at,
               \(latestMessageColumns),
               u.nickname AS peer_nickname, u.avatar AS peer_avatar,
               g.name AS group_name, g.avatar_key AS group_avatar, g.member_count,
               g.dissolved_at IS NOT NULL AS group_dissolved,
               (SELECT p.read_seq FROM conversation_members p WHERE cm.peer_id IS NOT NULL AND p.app_id = cm.app_id
                AND p.conversation_id = cm.conversation_id AND p.user_id = cm.peer_id) AS peer_read_seq,
               \(unreadExpression) AS unread_count
        FROM conversation_members cm
        JOIN conversations c ON c.app_id = cm.app_id AND c.id = cm.conversation_id
        LEFT JOIN messages lm ON lm.id = c.last_message_id
        LEFT JOIN users u ON u.app_id = cm.app_id AND u.id = cm.peer_id
        LEFT JOIN groups g ON g.app_id = c.app_id AND g.id = c.group_id
        """

    /// A user's conversations that show in their list (not deleted since the last message).
    static let visibleCondition = "(cm.hidden_seq IS NULL OR c.last_seq > cm.hidden_seq)"

    /// Sums the unread counts of the visible conversations of the user `cm.user_id` is compared with (muted ones
    /// included); the caller appends the app and user conditions.
    static let totalUnreadSelect = """
        SELECT coalesce(sum(\(unreadExpression)), 0)::bigint
        FROM conversation_members cm JOIN conversations c ON c.app_id = cm.app_id AND c.id = cm.conversation_id
        WHERE \(visibleCondition)
        """

    /// The caller's visible conversations: pinned first, then by last activity; `limit + 1` fetched for hasMore.
    /// `totalUnread` sums every visible conversation's unread count, not only the page's (computed once per
    /// statement; a page past the end asks for it alone).
    func list(appId: Int64, userId: String, offset: Int, limit: Int) async throws
        -> (conversations: [ConversationSummary], hasMore: Bool, totalUnread: Int64)
    {
        // The total is an uncorrelated subquery: evaluated once, beside the page.
        let rows = try await database.query(
            """
            SELECT (\(unescaped: Self.totalUnreadSelect) AND cm.app_id = \(appId) AND cm.user_id = \(userId))
                       AS total_unread, page.*
            FROM (\(unescaped: Self.summarySelect)
                  WHERE cm.app_id = \(appId) AND cm.user_id = \(userId) AND \(unescaped: Self.visibleCondition)
                  ORDER BY cm.is_pinned DESC, c.last_message_at DESC NULLS LAST, cm.conversation_id
                  OFFSET \(offset) LIMIT \(limit + 1)) page
            RIGHT JOIN (SELECT) AS always ON true
            ORDER BY page.is_pinned DESC, page.last_message_at DESC NULLS LAST, page.conversation_id
            """)
        let pageRows = rows.filter { !$0.isNull("conversation_id") }
        var list = try pageRows.map { try Self.decodeSummary($0) }
        let hasMore = list.count > limit
        if hasMore { list.removeLast() }
        return (list, hasMore, try rows[0].decode("total_unread", as: Int64.self))
    }

    /// The summaries of (conversation, user) pairs in one statement: what the realtime gateway sends as
    /// `conversation` events when a message, revoke, edit or read changes them. Unread counts cost two index probes
    /// per pair (see `unreadExpression`), never a statement per member.
    func summaries(appId: Int64, pairs: [(conversationId: String, userId: String)]) async throws
        -> [(userId: String, summary: ConversationSummary)]
    {
        guard !pairs.isEmpty else { return [] }
        let rows = try await database.query(
            """
            \(unescaped: Self.summarySelect)
            JOIN unnest(\(PostgresTextArray(pairs.map(\.conversationId)))::text[],
                        \(PostgresTextArray(pairs.map(\.userId)))::text[]) AS wanted(conversation_id, user_id)
              ON cm.conversation_id = wanted.conversation_id AND cm.user_id = wanted.user_id
            WHERE cm.app_id = \(appId)
            """)
        // A group's rows share its latest message: parsed once, not once per member.
        var latestMessages: [Int64: IMMessage] = [:]
        return try rows.map { row in
            (try row.decode("member_id", as: String.self), try Self.decodeSummary(row, latestMessages: &latestMessages))
        }
    }

    func summary(appId: Int64, userId: String, conversationId: String) async throws -> ConversationSummary? {
        try await database.query(
            """
            \(unescaped: Self.summarySelect)
            WHERE cm.app_id = \(appId) AND cm.user_id = \(userId) AND cm.conversation_id = \(conversationId)
            """
        ).first.map { try Self.decodeSummary($0) }
    }

    static func decodeSummary(_ row: PostgresRow) throws -> ConversationSummary {
        var latestMessages: [Int64: IMMessage] = [:]
        return try decodeSummary(row, latestMessages: &latestMessages)
    }

    /// `latestMessages`: the latest messages decoded so far, by id (rows of one group share theirs).
    static func decodeSummary(_ row: PostgresRow, latestMessages: inout [Int64: IMMessage]) throws
        -> ConversationSummary
    {
        let chatType = ChatType(rawValue: try row.decode("chat_type", as: String.self)) ?? .single
        let peerId = try row.decode("peer_id", as: String?.self)
        let clearSeq = try row.decode("clear_seq", as: Int64.self)
        var preview = ""
        var latest: IMMessage?
        if !row.isNull("lm_id"), try row.decode("lm_seq", as: Int64.self) > clearSeq {
            let id = try row.decode("lm_id", as: Int64.self)
            let message = try latestMessages[id] ?? MessageRepository.decode(row, prefix: "lm_")
            latestMessages[id] = message
            preview = MessagePreview.text(type: message.msgType, content: message.content, revoked: message.revoked)
            latest = message
        }
        let showName: String
        let face: String?
        if chatType == .group {
            showName = try row.decode("group_name", as: String?.self) ?? ""
            face = try row.decode("group_avatar", as: String?.self)
        } else {
            let nickname = try row.decode("peer_nickname", as: String?.self) ?? ""
            showName = nickname.isEmpty ? (peerId ?? "") : nickname
            face = try row.decode("peer_avatar", as: String?.self)
        }
        return ConversationSummary(
            conversationId: try row.decode("conversation_id"), chatType: chatType, peerUserId: peerId,
            groupId: try row.decode("group_id"), showName: showName, faceURL: face,
            memberCount: try row.decode("member_count"),
            groupDissolved: chatType == .group ? try row.decode("group_dissolved") : nil,
            isPinned: try row.decode("is_pinned"), draftText: try row.decode("draft_text"),
            muted: try row.decode("muted"), markedUnread: try row.decode("marked_unread"),
            unreadCount: try row.decode("unread_count"),
            mentionMsgId: try row.decode("mention_message_id", as: Int64?.self).map(String.init),
            readSeq: try row.decode("read_seq"),
            peerReadSeq: chatType == .single ? try row.decode("peer_read_seq") : nil,
            lastSeq: try row.decode("last_seq"), lastMessagePreview: preview,
            lastMessageTime: try row.decode("last_message_at"), lastMessageSenderId: latest?.fromId,
            latestMessage: latest)
    }

    struct StateUpdate: Sendable {
        var isPinned: Bool?
        var draftText: String?
        var muted: Bool?
    }

    /// Pin, draft, mute; records `change` for the user's other devices. False when not a member.
    func update(appId: Int64, userId: String, conversationId: String, _ update: StateUpdate, change: JSONValue)
        async throws -> Bool
    {
        let rows = try await database.query(
            """
            WITH updated AS (
                UPDATE conversation_members SET
                    is_pinned = coalesce(\(update.isPinned), is_pinned),
                    pinned_at = CASE WHEN \(update.isPinned) IS NULL THEN pinned_at
                                     WHEN \(update.isPinned) THEN now() ELSE NULL END,
                    draft_text = coalesce(\(update.draftText)::text, draft_text),
                    draft_updated_at = CASE WHEN \(update.draftText)::text IS NULL THEN draft_updated_at ELSE now() END,
                    muted = coalesce(\(update.muted), muted)
                WHERE app_id = \(appId) AND user_id = \(userId) AND conversation_id = \(conversationId)
                RETURNING conversation_id),
            recorded AS (
                INSERT INTO changes (app_id, conversation_id, user_id, kind, payload)
                SELECT \(appId), conversation_id, \(userId), 'conversation', \(change.serializedString)
                FROM updated)
            SELECT 1 FROM updated
            """)
        return !rows.isEmpty
    }

    /// Moves the read point forward to `seq` (clamped to the last message) and clears a mark as unread. Returns the
    /// read point after the call and whether it moved or the mark was cleared; nil when not a member. 1:1 read marks are visible to both sides (receipts),
    /// group read marks only to the reader's devices.
    func markRead(appId: Int64, userId: String, conversationId: String, seq: Int64) async throws
        -> (readSeq: Int64, moved: Bool, previousSeq: Int64)?
    {
        let rows = try await database.query(
            """
            WITH target AS (
                SELECT cm.read_seq AS old_seq, least(\(seq), c.last_seq) AS new_seq, c.chat_type
                FROM conversation_members cm JOIN conversations c ON c.app_id = cm.app_id AND c.id = cm.conversation_id
                WHERE cm.app_id = \(appId) AND cm.user_id = \(userId) AND cm.conversation_id = \(conversationId)),
            updated AS (
                UPDATE conversation_members cm SET read_seq = greatest(cm.read_seq, target.new_seq),
                                                   marked_unread = false
                FROM target
                WHERE cm.app_id = \(appId) AND cm.user_id = \(userId) AND cm.conversation_id = \(conversationId)
                  AND (cm.read_seq < target.new_seq OR cm.marked_unread)
                RETURNING cm.read_seq, target.chat_type),
            recorded AS (
                INSERT INTO changes (app_id, conversation_id, user_id, kind, payload)
                SELECT \(appId), \(conversationId), CASE WHEN chat_type = 'single' THEN NULL ELSE \(userId) END, 'read',
                       json_build_object('userId', \(userId)::text, 'seq', read_seq)::text
                FROM updated)
            SELECT target.old_seq, (SELECT read_seq FROM updated) AS moved_to FROM target
            """)
        guard let row = rows.first else { return nil }
        let previous = try row.decode("old_seq", as: Int64.self)
        if let moved = try row.decode("moved_to", as: Int64?.self) { return (moved, true, previous) }
        return (previous, false, previous)
    }

    /// Marks the conversation unread for this user and records `change` for their other devices; false when not a
    /// member. Marking it again records nothing more.
    func markUnread(appId: Int64, userId: String, conversationId: String, change: JSONValue) async throws -> Bool? {
        let rows = try await database.query(
            """
            WITH member AS (
                SELECT marked_unread FROM conversation_members
                WHERE app_id = \(appId) AND user_id = \(userId) AND conversation_id = \(conversationId)),
            updated AS (
                UPDATE conversation_members SET marked_unread = true
                WHERE app_id = \(appId) AND user_id = \(userId) AND conversation_id = \(conversationId)
                  AND NOT marked_unread
                RETURNING conversation_id),
            recorded AS (
                INSERT INTO changes (app_id, conversation_id, user_id, kind, payload)
                SELECT \(appId), conversation_id, \(userId), 'conversation', \(change.serializedString)
                FROM updated)
            SELECT EXISTS (SELECT 1 FROM updated) AS changed FROM member
            """)
        return try rows.first.map { try $0.decode("changed", as: Bool.self) }
    }

    enum Removal: String, Sendable {
        /// History up to now disappears for the caller; the conversation stays in the list.
        case clear
        /// Also leaves the list until a new message arrives; pin and draft are reset.
        case delete
    }

    /// Clears or deletes the conversation for this user only; returns the new clear point, nil when not a member.
    func remove(appId: Int64, userId: String, conversationId: String, _ removal: Removal) async throws -> Int64? {
        let deleting = removal == .delete
        let rows = try await database.query(
            """
            WITH updated AS (
                UPDATE conversation_members cm SET
                    clear_seq = c.last_seq, read_seq = greatest(cm.read_seq, c.last_seq),
                    hidden_seq = CASE WHEN \(deleting) THEN c.last_seq ELSE cm.hidden_seq END,
                    is_pinned = CASE WHEN \(deleting) THEN false ELSE cm.is_pinned END,
                    pinned_at = CASE WHEN \(deleting) THEN NULL ELSE cm.pinned_at END,
                    draft_text = CASE WHEN \(deleting) THEN '' ELSE cm.draft_text END
                FROM conversations c
                WHERE c.app_id = cm.app_id AND c.id = cm.conversation_id
                  AND cm.app_id = \(appId) AND cm.user_id = \(userId) AND cm.conversation_id = \(conversationId)
                RETURNING cm.clear_seq),
            recorded AS (
                INSERT INTO changes (app_id, conversation_id, user_id, kind, payload)
                SELECT \(appId), \(conversationId), \(userId), 'conversation',
                       json_build_object('conversationId', \(conversationId)::text, \(removal.rawValue == "clear" ? "cleared" : "deleted")::text, true,
                                         'clearSeq', clear_seq)::text
                FROM updated)
            SELECT clear_seq FROM updated
            """)
        return try rows.first.map { try $0.decode("clear_seq", as: Int64.self) }
    }

    /// Closes the 1:1 conversations of a deleted account: sends to it answer as for an unknown user
    /// (migrations/0019: read from the row every send locks).
    func closeSingleConversations(on connection: PostgresConnection, appId: Int64, of userId: String) async throws {
        _ = try await connection.query(
            """
            UPDATE conversations c SET closed_at = now()
            FROM conversation_members cm
            WHERE cm.app_id = \(appId) AND cm.user_id = \(userId) AND cm.peer_id IS NOT NULL
              AND c.app_id = cm.app_id AND c.id = cm.conversation_id AND c.closed_at IS NULL
            """)
    }
}
