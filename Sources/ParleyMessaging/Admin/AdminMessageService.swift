import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel
import ParleyPostgres

/// The admin API's messages (`/api/admin/messages...`): the app's backend sends as one of its users or as the
/// system, broadcasts, revokes any message and clears a conversation for everyone. Every call is already
/// app-scoped (the signed request named the app).
///
/// A send as a user (`fromId`) follows the user's own rules in the database (membership, blocks, mutes, the
/// friends-only policy) but skips the per-user send rate limit: the backend is trusted with its own pace. A send
/// as the system (no `fromId`) comes from the reserved user id `system`: 1:1, a `single` conversation between
/// `system` and the user; in a group, a message no membership check applies to (as group notify messages).
public struct AdminMessageService: Sendable {
    /// The sender of the system's messages (a reserved user id: no user row is needed, nothing references it).
    public static let systemUserId = "system"
    public static let maxBroadcastRecipients = 1000

    let database: PostgresClient
    let messages: MessageRepository
    let service: MessageService
    let events: MessagingEvents

    public struct Options: Sendable, Decodable {
        /// No push notification (the push trigger skips it).
        public var noPush: Bool?
        /// Does not count toward unread counts.
        public var noUnread: Bool?
        /// Delivered to the sockets open now, never stored.
        public var onlineOnly: Bool?

        public init(noPush: Bool? = nil, noUnread: Bool? = nil, onlineOnly: Bool? = nil) {
            self.noPush = noPush
            self.noUnread = noUnread
            self.onlineOnly = onlineOnly
        }

        var pushOptions: String? { noPush == true ? #"{"disabled":true}"# : nil }

        /// The stored push options of a send with `push` (its `disabled` or `noPush` turns the push off).
        func pushOptions(with push: MessagePushOptions?) -> String? {
            guard var push else { return pushOptions }
            if noPush == true { push.disabled = true }
            return push.stored
        }
    }

    public struct SendRequest: Sendable, Decodable {
        public var fromId: String?
        public var toId: String
        public var chatType: String
        public var msgType: String
        public var content: JSONValue
        public var extra: JSONValue?
        public var clientMsgId: String?
        public var options: Options?
        /// `{title?, body?, sound?, disabled?}`, checked as a user send's (`MessagePushOptions.parse`).
        public var push: JSONValue?
    }

    /// What a send answers: the stored message (`created` false for a repeated `clientMsgId`), or for an online-only
    /// message the delivered one (seq 0, `stored` false).
    public struct SendResult: Sendable {
        public var message: IMMessage
        public var created: Bool
        public var stored: Bool
    }

    /// A checked message before it is stored or delivered.
    struct Prepared {
        var sender: String
        var system: Bool
        var chatType: ChatType
        var msgType: MessageType
        var content: [UInt8]
        var contentValue: JSONValue
        var extra: [UInt8]?
        var extraValue: JSONValue?
    }

    /// Checks sender, types and content once (a broadcast checks them once for all its recipients).
    func prepare(
        appId: Int64, fromId: String?, chatType rawChatType: String, msgType rawMsgType: String, content: JSONValue,
        extra: JSONValue?
    ) async throws -> Prepared {
        guard let chatType = ChatType(rawValue: rawChatType) else {
            throw APIError.validationFailed.with(message: "`chatType` must be single or group")
        }
        guard let msgType = MessageType(rawValue: rawMsgType) else {
            throw APIError.validationFailed.with(
                message: "`msgType` must be one of " + MessageType.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let sender = try fromId.map { raw throws(APIError) in try MessagingInput.userID(raw, field: "fromId") }
        if msgType == .notify && sender != nil {
            throw APIError.validationFailed.with(message: "`msgType` notify is sent by the system only (no `fromId`)")
        }
        let contentValue = try MessageContentInput.value(msgType, content)
        // A notify message's content is a document the app defines, bounded like a custom message's.
        let validated = try service.validator.validate(msgType == .notify ? .custom : msgType, contentValue)
        let extraBytes = try service.validator.validateExtra(extra)
        if let sender {
            try await requireUsers([sender], appId: appId)
            if let attachments = service.attachments {
                let keys = try MessageContentValidator.objectKeys(msgType, contentValue)
                if !keys.isEmpty { try await attachments(keys, appId, sender) }
            }
        }
        return Prepared(
            sender: sender ?? Self.systemUserId, system: sender == nil, chatType: chatType, msgType: msgType,
            content: validated, contentValue: contentValue, extra: extraBytes, extraValue: extra)
    }

    /// 1103 naming the first of `userIds` that is not a user of the app (or was deleted).
    func requireUsers(_ userIds: [String], appId: Int64) async throws {
        let rows = try await database.query(
            """
            SELECT id FROM users
            WHERE app_id = \(appId) AND id = ANY(\(PostgresTextArray(userIds))::text[]) AND deleted_at IS NULL
            """)
        let found = Set(try rows.map { try $0.decode("id", as: String.self) })
        if let missing = userIds.first(where: { !found.contains($0) }) {
            throw APIError.userNotFound.with(message: "no user `\(missing)` in this app")
        }
    }

    public func send(_ request: SendRequest, appId: Int64) async throws -> SendResult {
        let prepared = try await prepare(
            appId: appId, fromId: request.fromId, chatType: request.chatType, msgType: request.msgType,
            content: request.content, extra: request.extra)
        let options = request.options ?? Options()
        let push = try MessagePushOptions.parse(request.push, prefix: "")
        let clientMsgId = try request.clientMsgId.map { id throws(APIError) in try MessagingInput.clientMsgID(id) }
        let toId: String
        let conversationId: String
        switch prepared.chatType {
        case .single:
            toId = try MessagingInput.userID(request.toId, field: "toId")
            if prepared.system { try await requireUsers([toId], appId: appId) }
            conversationId = ConversationID.single(prepared.sender, toId)
        case .group:
            toId = try MessagingInput.groupID(request.toId, field: "toId")
            conversationId = ConversationID.group(toId)
            let group = try await database.query(
                "SELECT dissolved_at FROM groups WHERE app_id = \(appId) AND id = \(toId)")
            guard let row = group.first else { throw APIError.groupNotFound }
            if prepared.system && !row.isNull("dissolved_at") { throw APIError.groupDissolved }
        }
        if options.onlineOnly == true {
            return try await sendOnlineOnly(
                prepared, appId: appId, toId: toId, conversationId: conversationId, clientMsgId: clientMsgId)
        }
        var message = MessageRepository.NewMessage(
            appId: appId, conversationId: conversationId, chatType: prepared.chatType, fromId: prepared.sender,
            toId: toId, msgType: prepared.msgType, content: prepared.content, extra: prepared.extra,
            clientMsgId: clientMsgId, contentValue: prepared.contentValue, extraValue: prepared.extraValue)
        message.system = prepared.system
        message.pushOptions = options.pushOptions(with: push)
        message.uncounted = options.noUnread == true
        let outcome = try await messages.send(message)
        switch outcome {
        case .stored(let stored):
            let json = stored.jsonBytes()
            publishStored(
                [
                    MessagingEvent(
                        appId: appId, conversationId: conversationId, audience: .conversationMembers,
                        origin: nil, payload: .message(stored), messageJSON: json)
                ], appId: appId)
            return SendResult(message: stored, created: true, stored: true)
        case .duplicate(let original):
            return SendResult(message: original, created: false, stored: true)
        default:
            throw MessageService.refusal(outcome, chatType: prepared.chatType, toId: toId)
        }
    }

    /// Checks the send as the database would (the same verdict, without storing), takes an id from the messages'
    /// sequence, and publishes the message to the sockets open now, here and on the other instances.
    private func sendOnlineOnly(
        _ prepared: Prepared, appId: Int64, toId: String, conversationId: String, clientMsgId: String?
    ) async throws -> SendResult {
        let chatType = prepared.chatType.rawValue
        let rows = try await database.query(
            """
            SELECT v.verdict, nextval('stream_positions') AS id, clock_timestamp() AS now
            FROM (SELECT) AS one
            LEFT JOIN conversations c ON c.app_id = \(appId) AND c.id = \(conversationId)
            CROSS JOIN LATERAL parley_send_verdict(
                \(appId), \(conversationId), \(chatType), \(prepared.sender), \(toId),
                c.id IS NOT NULL OR \(chatType) = 'single', coalesce(c.closed_at IS NOT NULL, false),
                \(prepared.chatType == .group ? toId : nil), \(prepared.system)) v
            """)
        guard let row = rows.first else { throw PostgresError(kind: .decoding, message: "no verdict") }
        let verdict = try row.decode("verdict", as: String.self)
        guard verdict == "stored" else {
            throw MessageService.refusal(
                try MessageRepository.refusal(verdict), chatType: prepared.chatType, toId: toId)
        }
        let message = IMMessage(
            id: String(try row.decode("id", as: Int64.self)), conversationId: conversationId, seq: 0,
            fromId: prepared.sender, toId: toId, chatType: prepared.chatType, msgType: prepared.msgType,
            content: prepared.contentValue, extra: prepared.extraValue.flatMap { $0.isNull ? nil : $0 },
            clientMsgId: clientMsgId, revoked: false, revokedBy: nil, createdAt: try row.decode("now"),
            editedAt: nil)
        let json = message.jsonBytes()
        guard json.count <= MessagingEvent.maxOnlineOnlyBytes else { throw APIError.onlineOnlyTooLarge }
        var event = MessagingEvent(
            appId: appId, conversationId: conversationId, audience: .conversationMembers, origin: nil,
            payload: .message(message), messageJSON: json)
        event.onlineOnly = true
        events.publish(event)
        return SendResult(message: message, created: true, stored: false)
    }

    // MARK: Broadcasts

    /// `userIds` for a list broadcast; none for a job to every user (`BroadcastJobs`).
    public struct BroadcastRequest: Sendable, Decodable {
        public var fromId: String?
        public var userIds: [String]?
        public var msgType: String
        public var content: JSONValue
        public var extra: JSONValue?
        public var options: Options?
    }

    /// One recipient's outcome: `sent` (with the message id), `unknown_user`, `duplicate` (already sent with
    /// this client id), or a refusal of the user's own rules (`blocked_by_recipient`, `not_friend`).
    public struct BroadcastResult: Sendable, Encodable {
        public var userId: String
        public var status: String
        public var messageId: String?
    }

    /// One 1:1 message to each of up to 1,000 users, stored in one statement (`parley_broadcast_messages`).
    public func broadcast(_ request: BroadcastRequest, appId: Int64) async throws -> [BroadcastResult] {
        let userIds = request.userIds ?? []
        guard (1...Self.maxBroadcastRecipients).contains(userIds.count) else {
            throw APIError.validationFailed.with(
                message: "`userIds` must list 1 to \(Self.maxBroadcastRecipients) users")
        }
        var seen = Set<String>()
        var recipients: [String] = []
        for raw in userIds {
            let id = try MessagingInput.userID(raw, field: "userIds")
            if seen.insert(id).inserted { recipients.append(id) }
        }
        let options = request.options ?? Options()
        guard options.onlineOnly != true else {
            throw APIError.validationFailed.with(message: "`options.onlineOnly` is for single sends only")
        }
        let prepared = try await prepare(
            appId: appId, fromId: request.fromId, chatType: ChatType.single.rawValue, msgType: request.msgType,
            content: request.content, extra: request.extra)
        let database = database
        let (results, published) = try await broadcast(
            prepared, to: recipients, clientMsgIds: recipients.map { _ in nil }, options: options, appId: appId,
            query: { try await database.query($0) })
        publishStored(published, appId: appId)
        return results
    }

    /// Publishes the events of messages that were stored and counts them in the statistics, as a user's send does.
    func publishStored(_ stored: [MessagingEvent], appId: Int64) {
        service.storedCounts?.add(appId: appId, count: stored.count)
        stored.forEach(events.publish)
    }

    /// Stores one message per recipient through `query` (a pooled connection, or a job's transaction) and
    /// answers the outcomes and the events to publish once it committed.
    func broadcast(
        _ prepared: Prepared, to recipients: [String], clientMsgIds: [String?], options: Options, appId: Int64,
        query: (PostgresQuery) async throws -> PostgresRows
    ) async throws -> (results: [BroadcastResult], events: [MessagingEvent]) {
        let conversations = recipients.map { ConversationID.single(prepared.sender, $0) }
        let rows = try await query(
            """
            SELECT r.ordinal, r.outcome, r.id, r.seq, r.created_at FROM parley_broadcast_messages(
                \(appId), \(prepared.sender), \(PostgresTextArray(recipients))::text[],
                \(PostgresTextArray(conversations))::text[], \(PostgresTextArray(optionals: clientMsgIds))::text[],
                \(prepared.msgType.rawValue), \(String(decoding: prepared.content, as: UTF8.self)),
                \(prepared.extra.map { String(decoding: $0, as: UTF8.self) }), \(prepared.system),
                \(options.pushOptions)::jsonb, \(options.noUnread == true)) r
            """)
        var results = recipients.map { BroadcastResult(userId: $0, status: "unknown_user", messageId: nil) }
        var published: [MessagingEvent] = []
        let extra = prepared.extraValue.flatMap { $0.isNull ? nil : $0 }
        for row in rows {
            let index = try row.decode("ordinal", as: Int.self) - 1
            guard results.indices.contains(index) else { continue }
            switch try row.decode("outcome", as: String.self) {
            case "stored":
                let message = IMMessage(
                    id: String(try row.decode("id", as: Int64.self)), conversationId: conversations[index],
                    seq: try row.decode("seq"), fromId: prepared.sender, toId: recipients[index],
                    chatType: .single, msgType: prepared.msgType, content: prepared.contentValue, extra: extra,
                    clientMsgId: clientMsgIds[index], revoked: false, revokedBy: nil,
                    createdAt: try row.decode("created_at"), editedAt: nil)
                results[index].status = "sent"
                results[index].messageId = message.id
                published.append(
                    MessagingEvent(
                        appId: appId, conversationId: message.conversationId, audience: .conversationMembers,
                        origin: nil, payload: .message(message)))
            case "duplicate": results[index].status = "duplicate"
            case "peer_refused": results[index].status = "blocked_by_recipient"
            case "not_friend": results[index].status = "not_friend"
            default: results[index].status = "unknown_user"
            }
        }
        return (results, published)
    }

    // MARK: Revoke and clear

    /// Revokes any message of the app, as `operatorId` (default the system), with the event a user's revoke has.
    public func revoke(messageId: Int64, operatorId rawOperator: String?, appId: Int64) async throws -> IMMessage {
        let operatorId =
            try rawOperator.map { raw throws(APIError) in try MessagingInput.userID(raw, field: "operatorId") }
            ?? Self.systemUserId
        guard
            let message = try await messages.findWithAccess(appId: appId, messageId: messageId, userId: operatorId)?
                .message
        else { throw APIError.messageNotFound }
        if message.revoked { return message }
        guard message.msgType != .notify else { throw APIError.revokeNotAllowed }
        return try await service.applyRevoke(message, appId: appId, operatorId: operatorId, origin: nil)
    }

    /// Clears a conversation's history for every member (as each member's own clear does for them): each gets the
    /// `conversation` event `{conversationId, cleared: true, clearSeq}` live and through sync.
    public func clear(conversationId rawID: String, appId: Int64) async throws -> (clearSeq: Int64, members: Int) {
        let conversationId = try MessagingInput.conversationID(rawID).id
        let rows = try await database.query(
            """
            WITH updated AS (
                UPDATE conversation_members cm SET
                    clear_seq = c.last_seq, read_seq = greatest(cm.read_seq, c.last_seq)
                FROM conversations c
                WHERE c.app_id = cm.app_id AND c.id = cm.conversation_id
                  AND cm.app_id = \(appId) AND cm.conversation_id = \(conversationId)
                RETURNING cm.user_id, cm.clear_seq),
            recorded AS (
                INSERT INTO changes (app_id, conversation_id, user_id, kind, payload)
                SELECT \(appId), \(conversationId), user_id, 'conversation',
                       json_build_object('conversationId', \(conversationId)::text, 'cleared', true,
                                         'clearSeq', clear_seq)::text
                FROM updated)
            SELECT user_id, clear_seq FROM updated
            """)
        guard let first = rows.first else { throw APIError.conversationNotFound }
        let clearSeq = try first.decode("clear_seq", as: Int64.self)
        let change = JSONValue.object(
            JSONObject([
                ("conversationId", .string(conversationId)), ("cleared", .bool(true)),
                ("clearSeq", .number(JSONNumber(clearSeq))),
            ]))
        for row in rows {
            events.publish(
                MessagingEvent(
                    appId: appId, conversationId: conversationId,
                    audience: .user(try row.decode("user_id", as: String.self)), origin: nil,
                    payload: .conversation(change)))
        }
        return (clearSeq, rows.count)
    }
}
