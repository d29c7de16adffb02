import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel
import ParleyPostgres

/// What `parley_send_message` (migrations/0003) answered.
enum SendOutcome: Sendable {
    case stored(IMMessage)
    case duplicate(IMMessage)
    case noSuchUser
    case notMember
    case blocked
    case dissolved
    /// 1:1 only: the recipient blocked the sender.
    case peerRefused
    /// 1:1 only: the app lets only friends chat and these two are not.
    case notFriend
    /// Group only: the sender is muted in the group until then.
    case muted(until: Date)
    /// Group only: the group is muted and the sender is a plain member.
    case mutedAll
    /// Group only: a plain member mentioned everybody.
    case mentionAllDenied
}

/// A message together with the caller's membership of its conversation (nil: not a member).
struct MessageAccess: Sendable {
    var message: IMMessage
    var membership: Membership?
}

/// Messages, always addressed within one app.
struct MessageRepository: Sendable {
    let database: PostgresClient

    static let columns = """
        id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, extra, client_msg_id, created_at, \
        edited_at, revoked_at, revoked_by, reply_quote, mention_ids, mention_all
        """

    /// The columns as `m.<name>`, for joins with tables that share column names.
    static let qualifiedColumns = columns.split(separator: ",").map { "m." + $0.trimmingCharacters(in: .whitespaces) }
        .joined(separator: ", ")

    static func decode(_ row: PostgresRow, prefix: String = "") throws -> IMMessage {
        let contentText = try row.decode(prefix + "content", as: String?.self)
        let extraText = try row.decode(prefix + "extra", as: String?.self)
        let chatType = try row.decode(prefix + "chat_type", as: String.self)
        let msgType = try row.decode(prefix + "msg_type", as: String.self)
        var message = IMMessage(
            id: String(try row.decode(prefix + "id", as: Int64.self)),
            conversationId: try row.decode(prefix + "conversation_id"),
            seq: try row.decode(prefix + "seq"),
            fromId: try row.decode(prefix + "from_id"),
            toId: try row.decode(prefix + "to_id"),
            chatType: ChatType(rawValue: chatType) ?? .single,
            msgType: MessageType(rawValue: msgType) ?? .custom,
            content: try contentText.map { text throws -> JSONValue in try parseStored(text) } ?? .null,
            extra: try extraText.map { text throws -> JSONValue in try parseStored(text) },
            clientMsgId: try row.decode(prefix + "client_msg_id"),
            revoked: !row.isNull(prefix + "revoked_at"),
            revokedBy: try row.decode(prefix + "revoked_by"),
            createdAt: try row.decode(prefix + "created_at"),
            editedAt: try row.decode(prefix + "edited_at"))
        if let quote = try row.decode(prefix + "reply_quote", as: String?.self) {
            message.reply = MessageReply(stored: try parseStored(quote))
        }
        let mentioned = try row.decode(prefix + "mention_ids", as: PostgresTextArray?.self)?.values.compactMap { $0 }
        let mentionsAll = try row.decode(prefix + "mention_all", as: Bool.self)
        if mentioned != nil || mentionsAll {
            message.mentions = MessageMentions(userIds: mentioned ?? [], all: mentionsAll)
        }
        return message
    }

    /// Stored JSON was serialized by us; a parse failure means the row was edited by hand.
    static func parseStored(_ text: String) throws -> JSONValue {
        do {
            return try JSONValue.parse(text)
        } catch {
            throw PostgresError(kind: .decoding, message: "stored message JSON does not parse: \(error.reason)")
        }
    }

    struct NewMessage: Sendable {
        var appId: Int64
        var conversationId: String
        var chatType: ChatType
        var fromId: String
        var toId: String
        var msgType: MessageType
        var content: [UInt8]
        var extra: [UInt8]?
        /// nil: never deduplicated (NULLs do not collide in `messages_client_msg_id`).
        var clientMsgId: String?
        /// Server-written notify messages skip the membership checks.
        var system = false
        /// The send's push options (`messages.push_options`, `MessagePushOptions.stored`) and whether the message
        /// stays out of unread counts. Only the single send takes them: `SendBatcher` sends such messages alone.
        var pushOptions: String? = nil
        var uncounted = false
        /// A reply: the message it answers and its quote. Mentions of group members. Single send only, as above.
        var replyTo: Int64? = nil
        var reply: MessageReply? = nil
        var mentions: MessageMentions? = nil

        /// Whether the batch function can store it (it takes none of the single send's options).
        var isBatchable: Bool { pushOptions == nil && !uncounted && replyTo == nil && mentions == nil }
        /// The parsed content and extra, when the caller has them: a batch's answer is then built without
        /// parsing the stored JSON back.
        var contentValue: JSONValue?
        var extraValue: JSONValue?

        /// The stored message, from what the database assigned.
        func stored(id: Int64, seq: Int64, createdAt: Date) throws -> IMMessage {
            var message = IMMessage(
                id: String(id), conversationId: conversationId, seq: seq, fromId: fromId, toId: toId,
                chatType: chatType, msgType: msgType,
                content: try contentValue ?? MessageRepository.parseStored(String(decoding: content, as: UTF8.self)),
                extra: try extraValue.flatMap { $0.isNull ? nil : $0 }
                    ?? extra.map { try MessageRepository.parseStored(String(decoding: $0, as: UTF8.self)) },
                clientMsgId: clientMsgId, revoked: false, revokedBy: nil, createdAt: createdAt, editedAt: nil)
            message.reply = reply
            message.mentions = mentions
            return message
        }
    }

    /// Stores a message in one round trip (outside any transaction: the statement is its own).
    func send(_ message: NewMessage) async throws -> SendOutcome {
        do {
            // One statement, one transaction: a deadlock with a racing batch (both creating the same 1:1
            // conversation and its members) aborts it whole, and running it again answers as if it had waited.
            let database = self.database
            return try await database.retryingSerializationFailures {
                try await Self.send(message, query: { try await database.query($0) })
            }
        } catch let error as PostgresError where error.isUniqueViolation && error.constraint == "messages_client_msg_id"
        {
            // A duplicate racing on another conversation (same sender, same clientMsgId) committed first.
            guard let clientMsgId = message.clientMsgId,
                let original = try await findByClientID(
                    appId: message.appId, fromId: message.fromId,
                    clientMsgId: clientMsgId)
            else { throw error }
            return .duplicate(original)
        }
    }

    /// Stores many messages in one statement (one transaction, one commit); one outcome per message, in order.
    /// When the batch as a whole fails (a duplicate racing on another conversation, a deadlock with a
    /// non-batch writer), each message is sent alone so that one cannot fail the others.
    func send(batch: [NewMessage]) async throws -> [Result<SendOutcome, any Error>] {
        if batch.count == 1 { return [await Result { try await send(batch[0]) }] }
        do {
            let rows = try await database.query(
                """
                SELECT r.ordinal, r.outcome, r.id, r.seq, r.created_at FROM parley_send_messages(
                    \(PostgresTextArray(batch.map { String($0.appId) }))::bigint[],
                    \(PostgresTextArray(batch.map(\.conversationId)))::text[],
                    \(PostgresTextArray(batch.map(\.chatType.rawValue)))::text[],
                    \(PostgresTextArray(batch.map(\.fromId)))::text[],
                    \(PostgresTextArray(batch.map(\.toId)))::text[],
                    \(PostgresTextArray(batch.map(\.msgType.rawValue)))::text[],
                    \(PostgresTextArray(batch.map { String(decoding: $0.content, as: UTF8.self) }))::text[],
                    \(PostgresTextArray(optionals: batch.map { $0.extra.map { String(decoding: $0, as: UTF8.self) } }))::text[],
                    \(PostgresTextArray(optionals: batch.map(\.clientMsgId)))::text[]) r
                """)
            var outcomes = [Result<SendOutcome, any Error>](
                repeating: .failure(PostgresError(kind: .decoding, message: "no answer for a batched message")),
                count: batch.count)
            for row in rows {
                let index = try row.decode("ordinal", as: Int.self) - 1
                guard outcomes.indices.contains(index) else { continue }
                let outcome = try row.decode("outcome", as: String.self)
                if outcome == "stored" {
                    outcomes[index] = .success(
                        .stored(
                            try batch[index].stored(
                                id: try row.decode("id"), seq: try row.decode("seq"),
                                createdAt: try row.decode("created_at"))))
                } else {
                    outcomes[index] = .success(try Self.refusal(outcome))
                }
            }
            return outcomes
        } catch let error as PostgresError where error.kind == .server {
            var outcomes: [Result<SendOutcome, any Error>] = []
            for message in batch { outcomes.append(await Result { try await send(message) }) }
            return outcomes
        }
    }

    /// The same inside a caller's transaction (group changes write their notify message this way).
    func send(_ message: NewMessage, on connection: PostgresConnection) async throws -> SendOutcome {
        try await Self.send(message, query: { try await connection.query($0) })
    }

    private static func send(_ message: NewMessage, query: (PostgresQuery) async throws -> PostgresRows) async throws
        -> SendOutcome
    {
        let content = String(decoding: message.content, as: UTF8.self)
        let extra = message.extra.map { String(decoding: $0, as: UTF8.self) }
        let rows = try await query(
            """
            SELECT r.outcome, (r.message).* FROM parley_send_message(
                \(message.appId), \(message.conversationId), \(message.chatType.rawValue), \(message.fromId),
                \(message.toId), \(message.msgType.rawValue), \(content), \(extra), \(message.clientMsgId),
                \(message.system), \(message.pushOptions)::jsonb, \(message.uncounted), \(message.replyTo),
                \(message.reply?.stored), \(message.mentions.map { PostgresTextArray($0.userIds) })::text[],
                \(message.mentions?.all ?? false)) r
            """)
        guard let row = rows.first else {
            throw PostgresError(kind: .decoding, message: "parley_send_message returned no row")
        }
        return try outcome(of: row)
    }

    private static func outcome(of row: PostgresRow) throws -> SendOutcome {
        switch try row.decode("outcome", as: String.self) {
        case "stored": return .stored(try decode(row))
        case "duplicate": return .duplicate(try decode(row))
        case let other: return try refusal(other)
        }
    }

    static func refusal(_ outcome: String) throws -> SendOutcome {
        switch outcome {
        case "no_user": return .noSuchUser
        case "not_member": return .notMember
        case "blocked": return .blocked
        case "dissolved": return .dissolved
        case "peer_refused": return .peerRefused
        case "not_friend": return .notFriend
        case "muted_all": return .mutedAll
        case "mention_all_denied": return .mentionAllDenied
        case let other where other.hasPrefix("muted:"):
            guard let milliseconds = Int64(other.dropFirst("muted:".count)) else {
                throw PostgresError(kind: .decoding, message: "unknown send outcome \(other)")
            }
            return .muted(until: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
        case let other: throw PostgresError(kind: .decoding, message: "unknown send outcome \(other)")
        }
    }

    func findByClientID(appId: Int64, fromId: String, clientMsgId: String) async throws -> IMMessage? {
        try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM messages
            WHERE app_id = \(appId) AND from_id = \(fromId) AND client_msg_id = \(clientMsgId)
            """
        ).first.map { try Self.decode($0) }
    }

    func find(ids: [Int64]) async throws -> [IMMessage] {
        guard !ids.isEmpty else { return [] }
        let list = "{" + ids.map(String.init).joined(separator: ",") + "}"
        return try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM messages WHERE id = ANY(\(list)::bigint[])
            """
        ).map { try Self.decode($0) }
    }

    /// The message and the caller's membership of its conversation, in one round trip.
    func findWithAccess(appId: Int64, messageId: Int64, userId: String) async throws -> MessageAccess? {
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.qualifiedColumns), \(unescaped: Membership.columns(prefix: "cm."))
            FROM messages m
            LEFT JOIN conversation_members cm
              ON cm.app_id = m.app_id AND cm.conversation_id = m.conversation_id AND cm.user_id = \(userId)
            WHERE m.app_id = \(appId) AND m.id = \(messageId)
            """)
        guard let row = rows.first else { return nil }
        return MessageAccess(message: try Self.decode(row), membership: try Membership.decodeIfPresent(row))
    }

    /// What a reply's quote says once the original is revoked.
    static let revokedQuoteText = MessagePreview.text(type: .text, content: .null, revoked: true)

    /// Wipes content and extra, records the revoke for sync and turns the quotes of its replies into "message
    /// revoked", in one statement; nil when it was already revoked. Its search entry goes with the indexer's next
    /// batch (the content change queues the message; a search never shows a revoked message meanwhile): deleting it
    /// here as well deadlocked with a batch holding the message's queue row and waiting for that entry.
    func revoke(appId: Int64, messageId: Int64, operatorId: String) async throws -> IMMessage? {
        let payload = JSONValue.object(JSONObject([("operatorId", .string(operatorId))])).serializedString
        let rows = try await database.query(
            """
            WITH revoked AS (
                UPDATE messages SET content = NULL, extra = NULL, revoked_at = clock_timestamp(),
                                    revoked_by = \(operatorId)
                WHERE app_id = \(appId) AND id = \(messageId) AND revoked_at IS NULL
                RETURNING \(unescaped: Self.columns)),
            recorded AS (
                INSERT INTO changes (app_id, conversation_id, kind, message_id, payload)
                SELECT \(appId), conversation_id, 'revoke', id, \(payload) FROM revoked),
            quotes AS (
                UPDATE messages r
                SET reply_quote = json_build_object('msgId', revoked.id::text, 'fromId', revoked.from_id,
                                                    'msgType', revoked.msg_type, 'text', \(Self.revokedQuoteText)::text,
                                                    'revoked', true)::text
                FROM revoked WHERE r.reply_to = revoked.id AND r.app_id = \(appId))
            SELECT * FROM revoked
            """)
        return try rows.first.map { try Self.decode($0) }
    }

    /// Replaces the content of a message that is not revoked, records the edit and gives its replies' quotes
    /// `quoteText` (the new content's one line); nil when it was revoked.
    func edit(appId: Int64, messageId: Int64, content: [UInt8], extra: [UInt8]??, quoteText: String) async throws
        -> IMMessage?
    {
        let contentText = String(decoding: content, as: UTF8.self)
        let keepExtra = extra == nil
        let extraText = (extra ?? nil).map { String(decoding: $0, as: UTF8.self) }
        let rows = try await database.query(
            """
            WITH edited AS (
                UPDATE messages SET content = \(contentText),
                                    extra = CASE WHEN \(keepExtra) THEN extra ELSE \(extraText)::text END,
                                    edited_at = clock_timestamp()
                WHERE app_id = \(appId) AND id = \(messageId) AND revoked_at IS NULL
                RETURNING \(unescaped: Self.columns)),
            recorded AS (
                INSERT INTO changes (app_id, conversation_id, kind, message_id)
                SELECT \(appId), conversation_id, 'edit', id FROM edited),
            quotes AS (
                UPDATE messages r
                SET reply_quote = json_build_object('msgId', edited.id::text, 'fromId', edited.from_id,
                                                    'msgType', edited.msg_type, 'text', \(quoteText)::text,
                                                    'revoked', false)::text
                FROM edited WHERE r.reply_to = edited.id AND r.app_id = \(appId))
            SELECT * FROM edited
            """)
        return try rows.first.map { try Self.decode($0) }
    }

    /// A page of history (`query`), never at or below `visibleAfter`, in the query's order; plus whether more exist
    /// beyond the page in the direction read. Every bound becomes a seq bound of one range scan on messages_seq
    /// (time bounds through parley_first_seq_at, migrations/0013), so no page scans the conversation.
    /// Messages `viewer` deleted for themselves are left out.
    func history(appId: Int64, conversationId: String, query: HistoryQuery, visibleAfter: Int64, viewer: String)
        async throws -> (messages: [IMMessage], hasMore: Bool)
    {
        let fetch = query.limit + 1
        // `end` is inclusive to the millisecond: the window ends where the next millisecond starts.
        let endExclusive = query.end.map { $0 + 1 }
        let direction = query.readsForward ? "ASC" : "DESC"
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM messages
            WHERE app_id = \(appId) AND conversation_id = \(conversationId)
              AND seq > greatest(\(visibleAfter), \(query.after)::bigint,
                                 parley_first_seq_at(\(appId), \(conversationId),
                                     timestamptz 'epoch' + \(query.begin)::bigint * interval '1 millisecond') - 1)
              AND seq < least(\(query.before)::bigint,
                              parley_first_seq_at(\(appId), \(conversationId),
                                  timestamptz 'epoch' + \(endExclusive)::bigint * interval '1 millisecond'),
                              9223372036854775807)
              AND NOT EXISTS (SELECT 1 FROM message_hidden h
                              WHERE h.app_id = \(appId) AND h.user_id = \(viewer) AND h.message_id = messages.id)
            ORDER BY seq \(unescaped: direction) LIMIT \(fetch)
            """)
        var messages = try rows.map { try Self.decode($0) }
        let hasMore = messages.count > query.limit
        if hasMore { messages.removeLast() }
        let newestFirst = query.order == .desc
        return (query.readsForward == newestFirst ? messages.reversed() : messages, hasMore)
    }
}

extension Result where Failure == any Error {
    /// `Result(catching:)` for async bodies.
    init(_ body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
