import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyPostgres

/// Each user's own view of their conversations: the list, history, read marks, pin, draft, mute, clear, delete.
/// The list, a conversation's summary and history are lag-tolerant reads (`reads`: a caught-up replica or the
/// primary); what follows a write here reads the primary.
public struct ConversationService: Sendable {
    let configuration: MessagingConfiguration
    let conversations: ConversationRepository
    let messages: MessageRepository
    let interactions: InteractionRepository
    let events: MessagingEvents
    let reads: PostgresReadRouter
    /// Told when a member's read point moves (group read receipts): app, conversation, from, to.
    var readMoved: (@Sendable (Int64, String, Int64, Int64) -> Void)? = nil

    public static let maxPageSize = 100

    /// The caller's membership, or 404 (1101) alike for a conversation that does not exist and for one the caller is
    /// not in: a third user learns nothing about who talks to whom.
    func requireMembership(_ conversationId: String, of principal: Principal) async throws -> Membership {
        try await requireMembership(conversationId, of: principal, in: conversations)
    }

    /// The same on `database` (the client a lag-tolerant read was handed).
    func requireMembership(_ conversationId: String, of principal: Principal, on database: PostgresClient)
        async throws -> Membership
    {
        try await requireMembership(conversationId, of: principal, in: conversations.on(database))
    }

    private func requireMembership(
        _ conversationId: String, of principal: Principal, in conversations: ConversationRepository
    ) async throws -> Membership {
        guard
            let membership = try await conversations.membership(
                appId: principal.appId, conversationId: conversationId,
                userId: principal.userId)
        else { throw APIError.conversationNotFound }
        return membership
    }

    /// Everyone who receives the conversation's events (the realtime gateway caches this per conversation).
    public func memberIDs(appId: Int64, conversationId: String) async throws -> [String] {
        if let members = ConversationID.singleMembers(conversationId) { return members }
        return try await conversations.memberIDs(appId: appId, conversationId: conversationId)
    }

    /// A page of the caller's list and the total unread count over all of it (muted conversations included).
    public func list(for principal: Principal, offset: Int, limit: Int) async throws
        -> (conversations: [ConversationSummary], hasMore: Bool, totalUnread: Int64)
    {
        try await reads.read { database in
            try await conversations.on(database).list(
                appId: principal.appId, userId: principal.userId, offset: offset, limit: limit)
        }
    }

    /// Each user's summary of a conversation, for (conversation, user) pairs, in one statement: the realtime
    /// gateway's `conversation` events (pairs that are no membership any more are left out).
    public func summaries(appId: Int64, pairs: [(conversationId: String, userId: String)]) async throws
        -> [(userId: String, summary: ConversationSummary)]
    {
        try await conversations.summaries(appId: appId, pairs: pairs)
    }

    /// The caller's summary of one conversation (`GET /api/im/conversations/{id}`).
    public func summary(_ conversationId: String, for principal: Principal) async throws -> ConversationSummary {
        try await reads.read { database in
            try await summary(conversationId, for: principal, in: conversations.on(database))
        }
    }

    private func summary(
        _ conversationId: String, for principal: Principal, in conversations: ConversationRepository
    ) async throws -> ConversationSummary {
        guard
            let summary = try await conversations.summary(
                appId: principal.appId, userId: principal.userId,
                conversationId: conversationId)
        else {
            _ = try await requireMembership(conversationId, of: principal, in: conversations)
            throw APIError.conversationNotFound
        }
        return summary
    }

    /// A page of history after the caller's clear point (`HistoryQuery` says which and in what order).
    public func history(_ conversationId: String, _ query: HistoryQuery, for principal: Principal)
        async throws -> (messages: [IMMessage], hasMore: Bool)
    {
        try await reads.read { database in
            let membership = try await requireMembership(
                conversationId, of: principal, in: conversations.on(database))
            var page = try await messages.on(database).history(
                appId: principal.appId, conversationId: conversationId, query: query,
                visibleAfter: membership.visibleAfter, viewer: principal.userId)
            try await interactions.on(database).attachReactions(&page.messages, viewer: principal.userId)
            return page
        }
    }

    public struct UpdateRequest: Sendable, Decodable {
        public var isPinned: Bool?
        public var draftText: String?
        public var muted: Bool?
    }

    public func update(_ conversationId: String, _ request: UpdateRequest, for principal: Principal) async throws
        -> ConversationSummary
    {
        guard request.isPinned != nil || request.draftText != nil || request.muted != nil else {
            throw APIError.validationFailed.with(message: "give at least one of `isPinned`, `draftText`, `muted`")
        }
        if let draft = request.draftText, draft.count > configuration.maxTextCharacters {
            throw APIError.validationFailed.with(
                message: "`draftText` must be at most \(configuration.maxTextCharacters) characters")
        }
        var payload = JSONObject([("conversationId", .string(conversationId))])
        if let isPinned = request.isPinned { payload["isPinned"] = .bool(isPinned) }
        if let draftText = request.draftText { payload["draftText"] = .string(draftText) }
        if let muted = request.muted { payload["muted"] = .bool(muted) }
        let update = ConversationRepository.StateUpdate(
            isPinned: request.isPinned, draftText: request.draftText,
            muted: request.muted)
        guard
            try await conversations.update(
                appId: principal.appId, userId: principal.userId,
                conversationId: conversationId, update, change: .object(payload))
        else {
            _ = try await requireMembership(conversationId, of: principal)
            throw APIError.conversationNotFound
        }
        publishOwnChange(payload, conversationId: conversationId, principal: principal)
        return try await summary(conversationId, for: principal, in: conversations)
    }

    /// Marks read up to `seq`; a 1:1 peer sees it as a read receipt, the reader's other devices update unread counts.
    public func markRead(_ conversationId: String, seq: Int64, for principal: Principal) async throws
        -> ConversationSummary
    {
        guard
            let result = try await conversations.markRead(
                appId: principal.appId, userId: principal.userId,
                conversationId: conversationId, seq: seq)
        else {
            _ = try await requireMembership(conversationId, of: principal)
            throw APIError.conversationNotFound
        }
        readMoved?(principal.appId, conversationId, result.previousSeq, result.readSeq)
        if result.moved {
            let isSingle = conversationId.hasPrefix("si:")
            events.publish(
                MessagingEvent(
                    appId: principal.appId, conversationId: conversationId,
                    audience: isSingle ? .conversationMembers : .user(principal.userId),
                    origin: principal.origin,
                    payload: .read(
                        conversationId: conversationId, userId: principal.userId,
                        seq: result.readSeq)))
        }
        return try await summary(conversationId, for: principal, in: conversations)
    }

    /// Marks the conversation unread for the caller (`markedUnread` in their summary) until their next read mark.
    public func markUnread(_ conversationId: String, for principal: Principal) async throws -> ConversationSummary {
        let payload = JSONObject([("conversationId", .string(conversationId)), ("markedUnread", true)])
        guard
            let changed = try await conversations.markUnread(
                appId: principal.appId, userId: principal.userId, conversationId: conversationId,
                change: .object(payload))
        else { throw APIError.conversationNotFound }
        if changed { publishOwnChange(payload, conversationId: conversationId, principal: principal) }
        return try await summary(conversationId, for: principal, in: conversations)
    }

    /// Clears history (`.clear`) or deletes the conversation (`.delete`) for the caller only.
    public func remove(_ conversationId: String, deleting: Bool, for principal: Principal) async throws -> Int64 {
        guard
            let clearSeq = try await conversations.remove(
                appId: principal.appId, userId: principal.userId,
                conversationId: conversationId,
                deleting ? .delete : .clear)
        else {
            _ = try await requireMembership(conversationId, of: principal)
            throw APIError.conversationNotFound
        }
        publishOwnChange(
            JSONObject([
                ("conversationId", .string(conversationId)),
                (deleting ? "deleted" : "cleared", .bool(true)),
                ("clearSeq", .number(JSONNumber(clearSeq))),
            ]),
            conversationId: conversationId, principal: principal)
        return clearSeq
    }

    private func publishOwnChange(_ payload: JSONObject, conversationId: String, principal: Principal) {
        events.publish(
            MessagingEvent(
                appId: principal.appId, conversationId: conversationId,
                audience: .user(principal.userId), origin: principal.origin,
                payload: .conversation(.object(payload))))
    }
}
