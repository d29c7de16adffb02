import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel
import ParleyPostgres

/// Sending, revoking and editing messages: the one code path behind the REST routes and the WebSocket protocol.
public struct MessageService: Sendable {
    let configuration: MessagingConfiguration
    let messages: MessageRepository
    /// Reactions and deletions for oneself, for reading one message as its reader sees it.
    let interactions: InteractionRepository
    let batcher: SendBatcher
    let validator: MessageContentValidator
    let events: MessagingEvents
    /// The revoke window of an app in seconds (its override or the server default).
    let revokeWindow: @Sendable (Int64) -> Int
    let now: @Sendable () -> Date
    /// Checks the files a message references (nil: keys are only checked for shape).
    let attachments: AttachmentAuthorizer?
    /// The app backend's check of user sends (nil: none wired).
    let beforeSend: BeforeSendHook?
    /// Sends per user, in memory: a database round trip per message would cost the hot path more than the limit
    /// saves, so each instance counts the sends it takes (a user spread over N instances gets up to N times the rate).
    let sendRate: TokenBucketLimiter<SenderKey>
    let refusals: QuotaRefusals
    /// Where a message is read by id (a lag-tolerant read).
    let reads: PostgresReadRouter
    /// The admin API's messages per day (counted in memory, written in batches: see `DailyMessageCounts`).
    var storedCounts: DailyMessageCounts? = nil

    struct SenderKey: Hashable, Sendable {
        var appId: Int64
        var userId: String
    }

    /// What a client sends (`POST /api/im/messages`, the WebSocket `send` frame).
    public struct SendRequest: Sendable {
        public var toId: String
        public var chatType: String
        public var msgType: String
        public var content: JSONValue
        public var extra: JSONValue?
        /// nil: never deduplicated (the 001 SDK sends none).
        public var clientMsgId: String?
        /// What the offline push says and plays, or that there is none.
        public var push: MessagePushOptions?
        /// The message does not count toward unread (`custom` messages only: commands, not conversation).
        public var noUnread: Bool
        /// The id of the message this one answers (of the same conversation).
        public var replyTo: String? = nil
        /// Group members mentioned (nil: nobody).
        public var mentions: MessageMentions? = nil

        public init(
            toId: String, chatType: String, msgType: String, content: JSONValue, extra: JSONValue? = nil,
            clientMsgId: String?, push: MessagePushOptions? = nil, noUnread: Bool = false
        ) {
            self.toId = toId
            self.chatType = chatType
            self.msgType = msgType
            self.content = content
            self.extra = extra
            self.clientMsgId = clientMsgId
            self.push = push
            self.noUnread = noUnread
        }
    }

    /// Stores a message (or finds the one a repeated `clientMsgId` stored) and publishes it; `json` is the message's
    /// JSON, written once for the answer and the realtime frame alike.
    public func send(_ request: SendRequest, from principal: Principal) async throws
        -> (message: IMMessage, created: Bool, json: [UInt8])
    {
        if sendRate.isEnabled, let wait = sendRate.acquire(SenderKey(appId: principal.appId, userId: principal.userId))
        {
            refusals.count(.sendRate)
            throw APIError.sendRateLimited(retryAfterSeconds: wait)
        }
        guard let chatType = ChatType(rawValue: request.chatType) else {
            if request.chatType == "room" {
                // Rooms belong to connected sockets (ParleyRealtime): a sender must be inside the room.
                throw APIError.validationFailed.with(
                    message: "room messages are sent over the WebSocket (`send` with chatType room)")
            }
            throw APIError.validationFailed.with(message: "`chatType` must be single or group")
        }
        let checked = try checkedContent(request)
        let msgType = checked.msgType
        let clientMsgId = checked.clientMsgId
        let replyTo = try request.replyTo.map { id throws(APIError) in
            do throws(APIError) {
                return try MessagingInput.messageID(id)
            } catch {
                throw APIError.validationFailed.with(message: "`replyTo` must be a message id")
            }
        }
        if request.mentions != nil && chatType != .group {
            throw APIError.validationFailed.with(message: "`mentions` are for group messages only")
        }
        let toId = try MessagingInput.userID(request.toId, field: "toId")
        var (contentValue, content) = (checked.contentValue, checked.content)
        var (extraValue, extra) = (checked.extraValue, checked.extra)
        if let beforeSend, beforeSend.isActive(principal.appId) {
            ((contentValue, content), (extraValue, extra)) = try await applyBeforeSend(
                beforeSend, principal: principal, toId: toId, chatType: chatType, msgType: msgType,
                clientMsgId: clientMsgId, content: (contentValue, content), extra: (extraValue, extra))
        }
        if let attachments {
            let keys = try MessageContentValidator.objectKeys(msgType, contentValue)
            if !keys.isEmpty { try await attachments(keys, principal.appId, principal.userId) }
        }
        let conversationId =
            chatType == .single ? ConversationID.single(principal.userId, toId) : ConversationID.group(toId)
        var message = MessageRepository.NewMessage(
            appId: principal.appId, conversationId: conversationId, chatType: chatType, fromId: principal.userId,
            toId: toId, msgType: msgType, content: content, extra: extra, clientMsgId: clientMsgId,
            contentValue: contentValue, extraValue: extraValue)
        message.pushOptions = request.push?.stored
        message.uncounted = request.noUnread
        message.mentions = request.mentions
        if let replyTo {
            message.replyTo = replyTo
            message.reply = try await replyQuote(replyTo, in: conversationId, by: principal)
        }
        let outcome = try await batcher.send(message)
        switch outcome {
        case .stored(let message):
            storedCounts?.add(appId: principal.appId)
            let json = message.jsonBytes()
            events.publish(
                MessagingEvent(
                    appId: principal.appId, conversationId: conversationId,
                    audience: .conversationMembers, origin: principal.origin,
                    payload: .message(message), messageJSON: json))
            return (message, true, json)
        case .duplicate(let message):
            return (message, false, message.jsonBytes())
        default: throw Self.refusal(outcome, chatType: chatType, toId: toId)
        }
    }

    /// The quote of the message a reply answers: one the sender sees in the same conversation (after their clear
    /// point, not deleted for them), else 1143. A revoked one is quoted as revoked.
    private func replyQuote(_ messageId: Int64, in conversationId: String, by principal: Principal) async throws
        -> MessageReply
    {
        guard
            let access = try await messages.findWithAccess(
                appId: principal.appId, messageId: messageId, userId: principal.userId),
            access.message.conversationId == conversationId, let membership = access.membership,
            access.message.seq > membership.visibleAfter,
            !(try await interactions.isHidden(appId: principal.appId, userId: principal.userId, messageId: messageId))
        else { throw APIError.replyTargetNotFound }
        return MessageReply(quoting: access.message)
    }

    /// Why a send was refused, as the client sees it (`outcome` is a refusal).
    static func refusal(_ outcome: SendOutcome, chatType: ChatType, toId: String) -> APIError {
        switch outcome {
        case .stored, .duplicate: preconditionFailure("not a refusal")
        case .noSuchUser: APIError.userNotFound.with(message: "no user `\(toId)` in this app")
        case .notMember: chatType == .group ? APIError.notMember : APIError.userNotFound
        case .blocked: APIError.blockedInGroup
        case .peerRefused: APIError.peerRefused
        case .notFriend: APIError.friendsOnly
        case .dissolved: APIError.groupDissolved
        case .muted(let until): APIError.mutedInGroup(until: until)
        case .mutedAll: APIError.groupMutedAll
        case .mentionAllDenied: APIError.mentionAllNotAllowed
        }
    }

    /// Messages by id, for delivering events another instance published (the ids come from our own NOTIFY
    /// payloads, so no caller check applies).
    public func loadForDelivery(ids: [Int64]) async throws -> [IMMessage] {
        try await messages.find(ids: ids)
    }

    /// A message as its conversation's members see it, with the reader's view of its reactions. Anyone else, and a
    /// member who cleared it from their history or deleted it for themselves, gets 1102 as for a message that does not
    /// exist (nothing tells them apart).
    public func message(_ messageId: Int64, for principal: Principal) async throws -> IMMessage {
        try await reads.read { database in try await message(messageId, for: principal, on: database) }
    }

    /// The same on `database` (the client a lag-tolerant read was handed).
    func message(_ messageId: Int64, for principal: Principal, on database: PostgresClient) async throws -> IMMessage {
        let interactions = interactions.on(database)
        guard
            let access = try await messages.on(database).findWithAccess(
                appId: principal.appId, messageId: messageId, userId: principal.userId),
            let membership = access.membership, access.message.seq > membership.visibleAfter,
            !(try await interactions.isHidden(appId: principal.appId, userId: principal.userId, messageId: messageId))
        else { throw APIError.messageNotFound }
        var one = [access.message]
        try await interactions.attachReactions(&one, viewer: principal.userId)
        return one[0]
    }

    /// Revokes the message `target` names, with the rules of `revoke(messageId:by:)`. A `clientMsgId` matches only
    /// the caller's own messages in that conversation: another user's message (an admin revoking it) is named by its
    /// id. Unknown, or not the caller's: 1102, as for an unknown id.
    public func revoke(_ target: RevokeTarget, by principal: Principal) async throws -> IMMessage {
        guard case .clientMsgId(let conversationId, let clientMsgId) = target else {
            guard case .id(let id) = target else { preconditionFailure("two cases") }
            return try await revoke(messageId: id, by: principal)
        }
        guard
            let message = try await messages.findByClientID(
                appId: principal.appId, fromId: principal.userId, clientMsgId: clientMsgId),
            message.conversationId == conversationId
        else { throw APIError.messageNotFound }
        return try await revoke(messageId: message.numericID, by: principal)
    }

    /// Revokes a message: its sender within the app's window, a group's owner and admins at any time. Content and
    /// extra are wiped from the row. Revoking a revoked message succeeds again without a second event.
    public func revoke(messageId: Int64, by principal: Principal) async throws -> IMMessage {
        guard
            let access = try await messages.findWithAccess(
                appId: principal.appId, messageId: messageId,
                userId: principal.userId),
            let membership = access.membership
        else { throw APIError.messageNotFound }
        let message = access.message
        if message.revoked { return message }
        guard message.msgType != .notify else { throw APIError.revokeNotAllowed }
        let isManager = message.chatType == .group && membership.role.isManager
        if !isManager {
            guard message.fromId == principal.userId else { throw APIError.revokeNotAllowed }
            let window = TimeInterval(revokeWindow(principal.appId))
            guard now().timeIntervalSince(message.createdAt) <= window else { throw APIError.revokeWindowPassed }
        }
        return try await applyRevoke(
            message, appId: principal.appId, operatorId: principal.userId, origin: principal.origin)
    }

    /// Wipes a checked message and publishes the revoke (a user's revoke and the admin API's share it).
    func applyRevoke(_ message: IMMessage, appId: Int64, operatorId: String, origin: String?) async throws
        -> IMMessage
    {
        guard
            let revoked = try await messages.revoke(
                appId: appId, messageId: message.numericID, operatorId: operatorId)
        else {
            // Revoked by someone else in the meantime: same answer, no second event.
            return try await messages.find(ids: [message.numericID]).first ?? message
        }
        events.publish(
            MessagingEvent(
                appId: appId, conversationId: revoked.conversationId,
                audience: .conversationMembers, origin: origin,
                payload: .revoke(
                    messageId: revoked.id, conversationId: revoked.conversationId,
                    operatorId: operatorId, seq: revoked.seq)))
        return revoked
    }

    public struct EditRequest: Sendable, Decodable {
        public var content: JSONValue
        public var extra: JSONValue??

        enum CodingKeys: String, CodingKey { case content, extra }

        public init(content: JSONValue, extra: JSONValue?? = nil) {
            self.content = content
            self.extra = extra
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            content = try container.decode(JSONValue.self, forKey: .content)
            // `"extra": null` decodes as `.null` (a JSONValue), which clears it.
            extra = container.contains(.extra) ? .some(try container.decode(JSONValue.self, forKey: .extra)) : nil
        }
    }

    /// Edits a text or richText message: its sender only, within the edit window, not once revoked.
    public func edit(messageId: Int64, _ request: EditRequest, by principal: Principal) async throws -> IMMessage {
        guard
            let access = try await messages.findWithAccess(
                appId: principal.appId, messageId: messageId,
                userId: principal.userId),
            access.membership != nil
        else { throw APIError.messageNotFound }
        let message = access.message
        guard message.fromId == principal.userId, message.msgType.isEditable else { throw APIError.editNotAllowed }
        guard !message.revoked else { throw APIError.messageRevoked }
        guard now().timeIntervalSince(message.createdAt) <= TimeInterval(configuration.editWindowSeconds) else {
            throw APIError.editWindowPassed
        }
        let contentValue = try MessageContentInput.value(message.msgType, request.content)
        let content = try validator.validate(message.msgType, contentValue)
        // Absent: keep the extra; null: remove it; a value: replace it.
        var extra: [UInt8]?? = nil
        if let requested = request.extra { extra = .some(try validator.validateExtra(requested)) }
        guard
            let edited = try await messages.edit(
                appId: principal.appId, messageId: messageId, content: content, extra: extra,
                quoteText: MessagePreview.text(type: message.msgType, content: contentValue, revoked: false))
        else { throw APIError.messageRevoked }
        events.publish(
            MessagingEvent(
                appId: principal.appId, conversationId: edited.conversationId,
                audience: .conversationMembers, origin: principal.origin,
                payload: .edit(edited)))
        return edited
    }
}
