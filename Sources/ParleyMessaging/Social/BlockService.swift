import Foundation
import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyPostgres

/// Blocks. A blocked user's 1:1 messages and friend requests to the blocker are refused (1119, which says nothing
/// more); group messages still flow both ways, as in OpenIM and Tencent Cloud Chat (leaving or removing is the
/// group's remedy). Blocking ends a friendship and closes pending requests between the two. Only the blocker's own
/// devices hear of it (`block`, `unblock`); the blocked user sees the friendship end like any other.
public struct BlockService: Sendable {
    let database: PostgresClient
    let friends: FriendRepository
    let blocks: BlockRepository
    let friendService: FriendService
    let userEvents: UserEvents
    /// PARLEY_IM_MAX_BLOCKS.
    let maxBlocks: Int
    /// The block list tolerates replica lag.
    let reads: PostgresReadRouter

    public static let defaultPageSize = 50
    public static let maxPageSize = 200

    /// Blocks `rawUserId`; `created` false when they were blocked already (nothing changes then).
    public func block(_ rawUserId: String, by principal: Principal) async throws -> (entry: BlockedUser, created: Bool)
    {
        let target = try MessagingInput.userID(rawUserId, field: "userId")
        guard target != principal.userId else {
            throw APIError.validationFailed.with(message: "you cannot block yourself")
        }
        let appId = principal.appId
        let me = principal.userId
        var published: [UserEvent] = []
        let result = try await database.withTransaction { connection -> (BlockedUser, Bool) in
            published = []
            try await friends.lockUsers(on: connection, appId: appId, [me, target])
            guard let profile = try await friends.profile(on: connection, appId: appId, userId: target) else {
                throw APIError.userNotFound
            }
            if let since = try await blocks.block(on: connection, appId: appId, blocker: me, blocked: target) {
                return (BlockedUser(userId: target, createdAt: since, user: profile), false)
            }
            guard try await blocks.count(on: connection, appId: appId, blocker: me) < maxBlocks else {
                throw APIError.blockLimitReached
            }
            guard let createdAt = try await blocks.insert(on: connection, appId: appId, blocker: me, blocked: target)
            else { throw APIError.blockLimitReached }
            _ = try await friendService.unfriend(on: connection, appId: appId, me, target, events: &published)
            _ = try await friends.closePending(on: connection, appId: appId, from: target, to: me, status: .rejected)
            _ = try await friends.closePending(on: connection, appId: appId, from: me, to: target, status: .withdrawn)
            let entry = BlockedUser(userId: target, createdAt: createdAt, user: profile)
            let blocked = UserEvent(kind: .block, data: entry.eventData(), recipients: [me])
            try await userEvents.record([blocked], appId: appId, on: connection)
            published.append(blocked)
            return (entry, true)
        }
        userEvents.publish(published, appId: appId, origin: principal.origin)
        return (result.0, result.1)
    }

    /// Lifts a block; false when there was none (nothing changes then).
    public func unblock(_ rawUserId: String, by principal: Principal) async throws -> Bool {
        let target = try MessagingInput.userID(rawUserId, field: "userId")
        let appId = principal.appId
        let me = principal.userId
        var published: [UserEvent] = []
        let removed = try await database.withTransaction { connection -> Bool in
            published = []
            try await friends.lockUsers(on: connection, appId: appId, [me, target])
            guard try await blocks.delete(on: connection, appId: appId, blocker: me, blocked: target) else {
                return false
            }
            published = [
                UserEvent(kind: .unblock, data: .object(JSONObject([("userId", .string(target))])), recipients: [me])
            ]
            try await userEvents.record(published, appId: appId, on: connection)
            return true
        }
        userEvents.publish(published, appId: appId, origin: principal.origin)
        return removed
    }

    public func blocks(cursor rawCursor: String?, limit: Int, for principal: Principal) async throws -> BlockPage {
        var cursor: BlockCursor?
        if let rawCursor {
            guard let parsed = BlockCursor(rawCursor) else {
                throw APIError.validationFailed.with(message: "`cursor` is not a cursor of this list")
            }
            cursor = parsed
        }
        let page = try await reads.read { [blocks] database in
            try await blocks.on(database).blocks(
                appId: principal.appId, blocker: principal.userId, after: cursor, limit: limit)
        }
        let next = page.hasMore ? page.blocks.last.map { BlockCursor(createdAt: $0.createdAt, userId: $0.userId) } : nil
        return BlockPage(blocks: page.blocks, cursor: next?.description, hasMore: page.hasMore)
    }
}
