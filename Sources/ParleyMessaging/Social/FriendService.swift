import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyPostgres

/// Friend requests and friendships. Every change reaches every device of both users exactly once: recorded for sync
/// in the transaction that makes it (`UserEvents`), published after the commit to all their devices but the one
/// that asked (it has the answer).
public struct FriendService: Sendable {
    let database: PostgresClient
    let friends: FriendRepository
    let blocks: BlockRepository
    let userEvents: UserEvents
    /// PARLEY_IM_MAX_FRIENDS.
    let maxFriends: Int
    /// Where the friend list is read (a lag-tolerant read).
    let reads: PostgresReadRouter

    static let maxMessageCharacters = 200
    static let maxRemarkCharacters = 64
    public static let defaultPageSize = 100
    public static let maxPageSize = 500

    /// Asks `rawUserId` to be friends. When they had asked the caller already, the two become friends at once
    /// (their request accepted, the caller's stored as accepted, `friend` set).
    public func sendRequest(to rawUserId: String, message rawMessage: String?, by principal: Principal) async throws
        -> FriendRequestResult
    {
        let target = try MessagingInput.userID(rawUserId, field: "userId")
        guard target != principal.userId else {
            throw APIError.validationFailed.with(message: "you cannot send a friend request to yourself")
        }
        var message = ""
        if let rawMessage, !rawMessage.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            message = try MessagingInput.text(rawMessage, field: "message", maxCharacters: Self.maxMessageCharacters)
        }
        let me = principal.userId
        let appId = principal.appId
        var published: [UserEvent] = []
        let result = try await database.withTransaction { connection -> FriendRequestResult in
            published = []
            try await friends.lockUsers(on: connection, appId: appId, [me, target])
            let (mine, theirs) = try await profiles(on: connection, appId: appId, me: me, other: target)
            try await checkNotBlocked(on: connection, appId: appId, me: me, other: target)
            if try await friends.friend(on: connection, appId: appId, userId: me, friendId: target) != nil {
                throw APIError.alreadyFriends
            }
            if try await friends.pendingRequest(on: connection, appId: appId, from: me, to: target) != nil {
                throw APIError.friendRequestPending
            }
            if let reverse = try await friends.pendingRequest(on: connection, appId: appId, from: target, to: me) {
                // They asked first: this request is their answer.
                try await checkLimits(on: connection, appId: appId, [me, target])
                _ = try await friends.handle(on: connection, appId: appId, id: Int64(reverse.id)!, status: .accepted)
                let request = try await friends.insertRequest(
                    on: connection, appId: appId, from: me, to: target, message: message, status: .accepted)
                let friend = try await befriend(
                    on: connection, appId: appId, me: me, other: target, events: &published)
                return FriendRequestResult(request: request.viewed(with: theirs), friend: friend)
            }
            try await checkLimits(on: connection, appId: appId, [me])
            let request = try await friends.insertRequest(
                on: connection, appId: appId, from: me, to: target, message: message, status: .pending)
            published = [
                UserEvent(kind: .friendRequest, data: request.viewed(with: mine).eventData(), recipients: [target]),
                UserEvent(kind: .friendRequest, data: request.viewed(with: theirs).eventData(), recipients: [me]),
            ]
            try await userEvents.record(published, appId: appId, on: connection)
            return FriendRequestResult(request: request.viewed(with: theirs), friend: nil)
        }
        userEvents.publish(published, appId: appId, origin: principal.origin)
        return result
    }

    /// The recipient accepts: both become friends (`remark`: the accepter's name for the new friend).
    public func accept(_ rawId: String, remark rawRemark: String?, by principal: Principal) async throws -> Friend {
        let id = try Self.requestID(rawId)
        let remark = try rawRemark.map(Self.remark)
        let me = principal.userId
        let appId = principal.appId
        var published: [UserEvent] = []
        let friend = try await database.withTransaction { connection -> Friend in
            published = []
            let request = try await lockedRequest(on: connection, appId: appId, id: id, recipient: me)
            try await checkLimits(on: connection, appId: appId, [me, request.fromId])
            _ = try await friends.handle(on: connection, appId: appId, id: id, status: .accepted)
            _ = try await friends.closePending(
                on: connection, appId: appId, from: me, to: request.fromId, status: .accepted)
            return try await befriend(
                on: connection, appId: appId, me: me, other: request.fromId, remark: remark, events: &published)
        }
        userEvents.publish(published, appId: appId, origin: principal.origin)
        return friend
    }

    /// The recipient declines: the sender learns it (`friend_request_rejected`).
    public func reject(_ rawId: String, by principal: Principal) async throws -> FriendRequest {
        try await close(rawId, as: .rejected, event: .friendRequestRejected, by: principal)
    }

    /// The sender takes the request back: the recipient learns it (`friend_request_withdrawn`).
    public func withdraw(_ rawId: String, by principal: Principal) async throws -> FriendRequest {
        try await close(rawId, as: .withdrawn, event: .friendRequestWithdrawn, by: principal)
    }

    public func requests(incoming: Bool, pendingOnly: Bool, cursor: String?, limit: Int, for principal: Principal)
        async throws -> FriendRequestPage
    {
        var before: Int64?
        if let cursor {
            guard MessagingInput.isDecimal(cursor), let id = Int64(cursor) else {
                throw APIError.validationFailed.with(message: "`cursor` is not a cursor of this list")
            }
            before = id
        }
        let page = try await friends.requests(
            appId: principal.appId, userId: principal.userId, incoming: incoming, pendingOnly: pendingOnly,
            before: before, limit: limit)
        return FriendRequestPage(
            requests: page.requests, cursor: page.hasMore ? page.requests.last?.id : nil, hasMore: page.hasMore)
    }

    /// The friend list: without `since`, the current friends page by page (id order, each page as committed when
    /// asked); with the `cursor` of a previous answer, the next page, or once the list was complete, what changed
    /// since (friends added or renamed, and `removed`). Keep the last cursor for the next incremental sync.
    public func friends(since rawSince: String?, limit: Int, for principal: Principal) async throws -> FriendPage {
        let cursor: FriendListCursor
        if let rawSince {
            guard let parsed = FriendListCursor(rawSince) else {
                throw APIError.validationFailed.with(message: "`since` is not a cursor of the friend list")
            }
            cursor = parsed
        } else {
            cursor = .listing(horizon: nil, after: "")
        }
        switch cursor {
        case .listing(let started, let after):
            let page = try await reads.read { [friends] database in
                try await friends.on(database).friends(
                    appId: principal.appId, userId: principal.userId, afterFriendId: after, limit: limit,
                    readingHorizon: started == nil)
            }
            // Changes from the first page's snapshot on are replayed by the incremental sync that follows.
            guard let horizon = started ?? page.horizon else {
                throw PostgresError(kind: .decoding, message: "the friend list's first page has no horizon")
            }
            let next: FriendListCursor =
                page.hasMore
                ? .listing(horizon: horizon, after: page.friends.last?.userId ?? after)
                : .changes(SyncCursor(xid: horizon, position: 0))
            return FriendPage(friends: page.friends, removed: [], cursor: next.description, hasMore: page.hasMore)
        case .changes(let since):
            let page = try await reads.read { [friends] database in
                try await friends.on(database).changes(
                    appId: principal.appId, userId: principal.userId, after: since, limit: limit)
            }
            return FriendPage(
                friends: page.friends, removed: page.removed, cursor: FriendListCursor.changes(page.next).description,
                hasMore: page.hasMore)
        }
    }

    public func setRemark(_ rawFriendId: String, remark rawRemark: String, by principal: Principal) async throws
        -> Friend
    {
        let friendId = try MessagingInput.userID(rawFriendId, field: "userId")
        let remark = try Self.remark(rawRemark)
        let appId = principal.appId
        let me = principal.userId
        var published: [UserEvent] = []
        let friend = try await database.withTransaction { connection -> Friend in
            guard
                try await friends.setRemark(
                    on: connection, appId: appId, userId: me, friendId: friendId, remark: remark),
                let friend = try await friends.friend(on: connection, appId: appId, userId: me, friendId: friendId)
            else { throw APIError.notFriend }
            published = [UserEvent(kind: .friendUpdated, data: friend.eventData(), recipients: [me])]
            try await userEvents.record(published, appId: appId, on: connection)
            return friend
        }
        userEvents.publish(published, appId: appId, origin: principal.origin)
        return friend
    }

    /// Ends the friendship on both sides.
    public func remove(_ rawFriendId: String, by principal: Principal) async throws {
        let friendId = try MessagingInput.userID(rawFriendId, field: "userId")
        let appId = principal.appId
        let me = principal.userId
        var published: [UserEvent] = []
        try await database.withTransaction { connection in
            published = []
            try await friends.lockUsers(on: connection, appId: appId, [me, friendId])
            guard try await unfriend(on: connection, appId: appId, me, friendId, events: &published) else {
                throw APIError.notFriend
            }
        }
        userEvents.publish(published, appId: appId, origin: principal.origin)
    }

    // MARK: Shared steps (also used by blocks)

    /// Makes them friends and records `friend_added` for both (each with their own view); the caller's entry.
    func befriend(
        on connection: PostgresConnection, appId: Int64, me: String, other: String, remark: String? = nil,
        events: inout [UserEvent]
    ) async throws -> Friend {
        try await friends.befriend(on: connection, appId: appId, me, other)
        if let remark {
            _ = try await friends.setRemark(on: connection, appId: appId, userId: me, friendId: other, remark: remark)
        }
        guard let mine = try await friends.friend(on: connection, appId: appId, userId: me, friendId: other),
            let theirs = try await friends.friend(on: connection, appId: appId, userId: other, friendId: me)
        else { throw APIError.userNotFound }
        let added = [
            UserEvent(kind: .friendAdded, data: mine.eventData(), recipients: [me]),
            UserEvent(kind: .friendAdded, data: theirs.eventData(), recipients: [other]),
        ]
        try await userEvents.record(added, appId: appId, on: connection)
        events += added
        return mine
    }

    /// Ends a friendship and records `friend_removed` for both; false when they were not friends.
    func unfriend(
        on connection: PostgresConnection, appId: Int64, _ me: String, _ other: String, events: inout [UserEvent]
    ) async throws -> Bool {
        guard try await friends.unfriend(on: connection, appId: appId, me, other) else { return false }
        let removed = [
            UserEvent(kind: .friendRemoved, data: .object(JSONObject([("userId", .string(other))])), recipients: [me]),
            UserEvent(kind: .friendRemoved, data: .object(JSONObject([("userId", .string(me))])), recipients: [other]),
        ]
        try await userEvents.record(removed, appId: appId, on: connection)
        events += removed
        return true
    }

    // MARK: Helpers

    private func close(
        _ rawId: String, as status: FriendRequestStatus, event: UserEventKind, by principal: Principal
    ) async throws -> FriendRequest {
        let id = try Self.requestID(rawId)
        let appId = principal.appId
        let me = principal.userId
        var published: [UserEvent] = []
        let request = try await database.withTransaction { connection -> FriendRequest in
            published = []
            let byRecipient = status == .rejected
            let pending: FriendRequest
            if byRecipient {
                pending = try await lockedRequest(on: connection, appId: appId, id: id, recipient: me)
            } else {
                pending = try await lockedRequest(on: connection, appId: appId, id: id, sender: me)
            }
            guard let closed = try await friends.handle(on: connection, appId: appId, id: id, status: status) else {
                throw APIError.friendRequestHandled
            }
            let other = byRecipient ? pending.fromId : pending.toId
            let otherProfile = try await friends.profile(on: connection, appId: appId, userId: other)
            let myProfile = try await friends.profile(on: connection, appId: appId, userId: me)
            published = [
                UserEvent(kind: event, data: closed.viewed(with: myProfile).eventData(), recipients: [other]),
                UserEvent(kind: event, data: closed.viewed(with: otherProfile).eventData(), recipients: [me]),
            ]
            try await userEvents.record(published, appId: appId, on: connection)
            return closed.viewed(with: otherProfile)
        }
        userEvents.publish(published, appId: appId, origin: principal.origin)
        return request
    }

    /// The request, pending, with its two users locked; 1123 unless the caller is its recipient (or sender).
    private func lockedRequest(
        on connection: PostgresConnection, appId: Int64, id: Int64, recipient: String? = nil, sender: String? = nil
    ) async throws -> FriendRequest {
        guard let found = try await friends.request(on: connection, appId: appId, id: id),
            recipient.map({ $0 == found.toId }) ?? true, sender.map({ $0 == found.fromId }) ?? true
        else { throw APIError.friendRequestNotFound }
        try await friends.lockUsers(on: connection, appId: appId, [found.fromId, found.toId])
        // Read again under the locks: a racing accept, withdrawal or block may have closed it.
        guard let request = try await friends.request(on: connection, appId: appId, id: id),
            request.status == .pending
        else { throw APIError.friendRequestHandled }
        return request
    }

    private func profiles(on connection: PostgresConnection, appId: Int64, me: String, other: String) async throws
        -> (mine: PublicProfile?, theirs: PublicProfile)
    {
        guard let theirs = try await friends.profile(on: connection, appId: appId, userId: other) else {
            throw APIError.userNotFound
        }
        return (try await friends.profile(on: connection, appId: appId, userId: me), theirs)
    }

    /// 1119 when the other user blocked the caller (nothing more is said), 1125 when the caller blocked them.
    private func checkNotBlocked(on connection: PostgresConnection, appId: Int64, me: String, other: String)
        async throws
    {
        if try await blocks.block(on: connection, appId: appId, blocker: other, blocked: me) != nil {
            throw APIError.peerRefused
        }
        if try await blocks.block(on: connection, appId: appId, blocker: me, blocked: other) != nil {
            throw APIError.youBlockedUser
        }
    }

    private func checkLimits(on connection: PostgresConnection, appId: Int64, _ users: [String]) async throws {
        for user in users
        where try await friends.activeFriendCount(on: connection, appId: appId, userId: user) >= maxFriends {
            throw APIError.friendLimitReached
        }
    }

    static func requestID(_ raw: String) throws(APIError) -> Int64 {
        // Anything that is not an id we issued names no request of the caller's.
        guard MessagingInput.isDecimal(raw), let id = Int64(raw), id > 0 else { throw APIError.friendRequestNotFound }
        return id
    }

    /// A remark may be empty (clears it); otherwise a short name.
    static func remark(_ raw: String) throws(APIError) -> String {
        if raw.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return "" }
        return try MessagingInput.name(raw, field: "remark", maxCharacters: maxRemarkCharacters)
    }
}

/// Where a friend-list read stands: inside a full listing (the horizon of its first page, the last id returned), or
/// at a stream position of friendship changes (the same form as sync cursors).
enum FriendListCursor: Hashable, CustomStringConvertible {
    case listing(horizon: UInt64?, after: String)
    case changes(SyncCursor)

    init?(_ text: String) {
        if text.hasPrefix("L") {
            let body = text.dropFirst()
            guard let dot = body.firstIndex(of: "."), MessagingInput.isDecimal(body[..<dot]),
                let horizon = UInt64(body[..<dot]),
                MessagingInput.isIdentifier(body[body.index(after: dot)...])
            else { return nil }
            self = .listing(horizon: horizon, after: String(body[body.index(after: dot)...]))
        } else {
            guard let cursor = SyncCursor(text) else { return nil }
            self = .changes(cursor)
        }
    }

    var description: String {
        switch self {
        case .listing(let horizon, let after): "L\(horizon ?? 0).\(after)"
        case .changes(let cursor): cursor.description
        }
    }
}
