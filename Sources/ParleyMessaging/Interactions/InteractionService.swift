import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyPostgres

/// What members do with messages besides sending them: reactions, pins, deleting a message for oneself. Each change
/// commits with its sync record and is published to the members after the commit.
public struct InteractionService: Sendable {
    let database: PostgresClient
    let repository: InteractionRepository
    let conversationEvents: ConversationEvents
    let userEvents: UserEvents
    /// Where the pinned messages are read (a lag-tolerant read).
    let reads: PostgresReadRouter

    /// A message's reactions after a change, as the caller sees them.
    public struct ReactionState: Sendable, Encodable {
        public var conversationId: String
        public var msgId: String
        public var reactions: [MessageReaction]
    }

    /// Adds (`adding`) or removes the caller's `emoji` on a message of a conversation they are in. Doing it twice
    /// answers the same and publishes nothing more.
    public func react(messageId: Int64, emoji rawEmoji: String, adding: Bool, by principal: Principal) async throws
        -> ReactionState
    {
        let emoji = try MessagingInput.reaction(rawEmoji)
        let appId = principal.appId
        let userId = principal.userId
        var changed = false
        let state = try await database.withTransaction { connection -> ReactionState in
            let target = try await visibleTarget(on: connection, messageId: messageId, principal: principal)
            if adding {
                guard !target.message.revoked else { throw APIError.messageRevoked }
                changed = try await repository.addReaction(
                    on: connection, appId: appId, messageId: messageId, emoji: emoji, userId: userId)
            } else {
                changed = try await repository.removeReaction(
                    on: connection, messageId: messageId, emoji: emoji, userId: userId)
            }
            let reactions =
                try await repository.reactions(messageIds: [messageId], viewer: userId, on: connection)[messageId] ?? []
            let state = ReactionState(
                conversationId: target.message.conversationId, msgId: target.message.id, reactions: reactions)
            if changed {
                try await conversationEvents.record(
                    .reaction, data: Self.reactionEvent(state, emoji: emoji, userId: userId, added: adding),
                    appId: appId, conversationId: state.conversationId, messageId: messageId, on: connection)
            }
            return state
        }
        if changed {
            conversationEvents.publish(
                .reaction, data: Self.reactionEvent(state, emoji: emoji, userId: userId, added: adding), appId: appId,
                conversationId: state.conversationId, origin: principal.origin)
        }
        return state
    }

    /// The event every member gets: who changed which emoji, and the message's counts after it (without `me`, which
    /// differs per member).
    static func reactionEvent(_ state: ReactionState, emoji: String, userId: String, added: Bool) -> JSONValue {
        .object(
            JSONObject([
                ("conversationId", .string(state.conversationId)), ("msgId", .string(state.msgId)),
                ("emoji", .string(emoji)), ("userId", .string(userId)),
                ("action", .string(added ? "added" : "removed")),
                (
                    "reactions",
                    .array(
                        state.reactions.map {
                            .object(
                                JSONObject([("emoji", .string($0.emoji)), ("count", .number(JSONNumber($0.count)))]))
                        })
                ),
            ]))
    }

    /// Pins (`pinning`) or unpins a message in its conversation: either member of a 1:1 conversation, a group's owner
    /// and admins. Pinning a pinned message (or unpinning one that is not) answers the same and publishes nothing.
    public func pin(messageId: Int64, pinning: Bool, by principal: Principal) async throws -> PinState {
        let appId = principal.appId
        var changed = false
        let state = try await database.withTransaction { connection -> PinState in
            let target = try await visibleTarget(on: connection, messageId: messageId, principal: principal)
            let message = target.message
            if message.chatType == .group && !target.membership.role.isManager {
                throw APIError.groupPermissionDenied.with(message: "only the group's owner and admins pin messages")
            }
            var state = PinState(
                conversationId: message.conversationId, msgId: message.id, pinned: pinning, pinnedBy: nil,
                pinnedAt: nil)
            if pinning {
                guard !message.revoked else { throw APIError.messageRevoked }
                let pin = try await repository.pin(
                    on: connection, appId: appId, conversationId: message.conversationId, messageId: messageId,
                    by: principal.userId)
                changed = pin.created
                state.pinnedAt = pin.pinnedAt
                state.pinnedBy = principal.userId
            } else {
                changed = try await repository.unpin(
                    on: connection, appId: appId, conversationId: message.conversationId, messageId: messageId)
            }
            if changed {
                try await conversationEvents.record(
                    pinning ? .messagePinned : .messageUnpinned, data: state.eventData(by: principal.userId),
                    appId: appId, conversationId: message.conversationId, messageId: messageId, on: connection)
            }
            return state
        }
        if changed {
            conversationEvents.publish(
                pinning ? .messagePinned : .messageUnpinned, data: state.eventData(by: principal.userId), appId: appId,
                conversationId: state.conversationId, origin: principal.origin)
        }
        return state
    }

    public struct PinState: Sendable, Encodable {
        public var conversationId: String
        public var msgId: String
        public var pinned: Bool
        public var pinnedBy: String?
        public var pinnedAt: Date?

        /// `message_pinned` / `message_unpinned` data: the message, who did it, and when it was pinned.
        func eventData(by userId: String) -> JSONValue {
            var object = JSONObject([
                ("conversationId", .string(conversationId)), ("msgId", .string(msgId)), ("operatorId", .string(userId)),
            ])
            if let pinnedAt { object["pinnedAt"] = .string(ISO8601.format(pinnedAt)) }
            return .object(object)
        }
    }

    /// The conversation's pinned messages the caller may see, newest pin first.
    public func pins(_ conversationId: String, for principal: Principal, conversations: ConversationService)
        async throws -> [PinnedMessage]
    {
        try await reads.read { [repository] database in
            let membership = try await conversations.requireMembership(conversationId, of: principal, on: database)
            return try await repository.on(database).pins(
                appId: principal.appId, conversationId: conversationId, visibleAfter: membership.visibleAfter,
                userId: principal.userId)
        }
    }

    /// Deletes a message from the caller's own history (and their other devices', through a `message_deleted`
    /// event); the other members keep it. Deleting it again answers the same.
    public func deleteForMe(messageId: Int64, by principal: Principal) async throws -> (
        conversationId: String, msgId: String
    ) {
        var published: [UserEvent] = []
        let result = try await database.withTransaction { connection -> (String, String) in
            published = []
            let target = try await visibleTarget(on: connection, messageId: messageId, principal: principal)
            let message = target.message
            if try await repository.hide(
                on: connection, appId: principal.appId, userId: principal.userId, messageId: messageId)
            {
                published = [
                    UserEvent(
                        kind: .messageDeleted,
                        data: .object(
                            JSONObject([
                                ("conversationId", .string(message.conversationId)), ("msgId", .string(message.id)),
                            ])),
                        recipients: [principal.userId])
                ]
                try await userEvents.record(published, appId: principal.appId, on: connection)
            }
            return (message.conversationId, message.id)
        }
        userEvents.publish(published, appId: principal.appId, origin: principal.origin)
        return result
    }

    /// The message, locked, when the caller may see it: a member, after their clear point, not deleted for them.
    /// Anything else is 1102, as for a message that does not exist.
    private func visibleTarget(on connection: PostgresConnection, messageId: Int64, principal: Principal)
        async throws -> InteractionRepository.Target
    {
        guard
            let target = try await repository.lockTarget(
                on: connection, appId: principal.appId, messageId: messageId, userId: principal.userId),
            target.message.seq > target.membership.visibleAfter, !target.hidden
        else { throw APIError.messageNotFound }
        return target
    }
}
