import Foundation
import ParleyAuth
import ParleyPostgres

/// Friendships and friend requests, always within one app. Writers run on the caller's transaction after
/// `lockUsers`, so that two requests of the same pair (or a request racing an accept, a block, a limit check)
/// never interleave.
struct FriendRepository: Sendable {
    let database: PostgresClient

    /// Serializes social-graph changes of these users (transaction-scoped advisory locks, taken in one order).
    func lockUsers(on connection: PostgresConnection, appId: Int64, _ userIds: [String]) async throws {
        for userId in Set(userIds).sorted() {
            _ = try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtextextended('social:' || \(String(appId)) || ':' || \(userId), 0))")
        }
    }

    /// The user's public profile, or nil when there is no such user in the app (or the account was deleted).
    func profile(on connection: PostgresConnection, appId: Int64, userId: String) async throws -> PublicProfile? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: PublicProfile.columns(of: "u", prefix: "u_")) FROM users u
            WHERE u.app_id = \(appId) AND u.id = \(userId) AND u.deleted_at IS NULL
            """)
        return try rows.first.map { try PublicProfile(row: $0, prefix: "u_") }
    }

    // MARK: Friendships

    static let friendColumns = "f.friend_id, f.remark, f.active, f.friends_since, f.xid::text AS xid, f.position"

    static func decodeFriend(_ row: PostgresRow) throws -> Friend {
        Friend(
            userId: try row.decode("friend_id"), remark: try row.decode("remark"),
            createdAt: try row.decode("friends_since"), user: try PublicProfile(row: row, prefix: "u_"))
    }

    func friend(on connection: PostgresConnection, appId: Int64, userId: String, friendId: String) async throws
        -> Friend?
    {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: Self.friendColumns), \(unescaped: PublicProfile.columns(of: "u", prefix: "u_"))
            FROM friendships f JOIN users u ON u.app_id = f.app_id AND u.id = f.friend_id
            WHERE f.app_id = \(appId) AND f.user_id = \(userId) AND f.friend_id = \(friendId) AND f.active
            """)
        return try rows.first.map(Self.decodeFriend)
    }

    func activeFriendCount(on connection: PostgresConnection, appId: Int64, userId: String) async throws -> Int {
        let rows = try await connection.query(
            """
            SELECT count(*) AS n FROM friendships
            WHERE app_id = \(appId) AND user_id = \(userId) AND active
            """)
        return try rows[0].decode("n", as: Int.self)
    }

    /// Makes the two users friends (both rows active, a fresh stream position); a tombstone comes back to life.
    func befriend(on connection: PostgresConnection, appId: Int64, _ first: String, _ second: String) async throws {
        _ = try await connection.query(
            """
            INSERT INTO friendships (app_id, user_id, friend_id)
            VALUES (\(appId), \(first), \(second)), (\(appId), \(second), \(first))
            ON CONFLICT (app_id, user_id, friend_id) DO UPDATE
            SET active = true, remark = '', friends_since = now(), xid = pg_current_xact_id(),
                position = nextval('stream_positions')
            WHERE NOT friendships.active
            """)
    }

    /// Ends a friendship on both sides (tombstones, so that incremental syncs see it); false when they were not
    /// friends.
    func unfriend(on connection: PostgresConnection, appId: Int64, _ first: String, _ second: String) async throws
        -> Bool
    {
        let rows = try await connection.query(
            """
            UPDATE friendships SET active = false, xid = pg_current_xact_id(), position = nextval('stream_positions')
            WHERE app_id = \(appId) AND active
              AND ((user_id = \(first) AND friend_id = \(second)) OR (user_id = \(second) AND friend_id = \(first)))
            RETURNING user_id
            """)
        return !rows.isEmpty
    }

    func setRemark(on connection: PostgresConnection, appId: Int64, userId: String, friendId: String, remark: String)
        async throws -> Bool
    {
        let rows = try await connection.query(
            """
            UPDATE friendships SET remark = \(remark), xid = pg_current_xact_id(), position = nextval('stream_positions')
            WHERE app_id = \(appId) AND user_id = \(userId) AND friend_id = \(friendId) AND active
            RETURNING friend_id
            """)
        return !rows.isEmpty
    }

    /// Ends every friendship of the user on both sides (tombstones, as `unfriend`); returns the ex-friends.
    func unfriendAll(on connection: PostgresConnection, appId: Int64, userId: String) async throws -> [String] {
        try await connection.query(
            """
            UPDATE friendships SET active = false, xid = pg_current_xact_id(), position = nextval('stream_positions')
            WHERE app_id = \(appId) AND (user_id = \(userId) OR friend_id = \(userId)) AND active
            RETURNING user_id
            """
        ).compactMap { row in
            let owner = try row.decode("user_id", as: String.self)
            return owner == userId ? nil : owner
        }
    }

    /// Current friends after `afterFriendId` in id order (a full listing sees every committed friendship at once),
    /// and, when `readingHorizon` (a listing's first page), the horizon of the statement's snapshot: every
    /// friendship change that was not visible to it has a stream position after `(horizon, 0)`. Later pages leave it
    /// out: it costs a WAL flush on the primary (`StreamHorizon`).
    func friends(appId: Int64, userId: String, afterFriendId: String, limit: Int, readingHorizon: Bool) async throws
        -> (friends: [Friend], horizon: UInt64?, hasMore: Bool)
    {
        let horizonColumns = readingHorizon ? StreamHorizon.columns : "NULL::xid8 AS xmin, NULL::bool AS on_standby"
        let rows = try await database.query(
            """
            WITH page AS (
                SELECT \(unescaped: Self.friendColumns), \(unescaped: PublicProfile.columns(of: "u", prefix: "u_"))
                FROM friendships f JOIN users u ON u.app_id = f.app_id AND u.id = f.friend_id
                WHERE f.app_id = \(appId) AND f.user_id = \(userId) AND f.friend_id > \(afterFriendId) AND f.active
                ORDER BY f.friend_id
                LIMIT \(limit + 1))
            SELECT h.xmin::text AS horizon, h.on_standby, page.*
            FROM (SELECT \(unescaped: horizonColumns)) h LEFT JOIN page ON true
            ORDER BY page.friend_id
            """)
        let horizon = try rows[0].decode("horizon", as: String?.self).flatMap { UInt64($0) }
        if let horizon { try await StreamHorizon.settle(rows[0], horizon: horizon, on: database) }
        var friends = try rows.filter { !$0.isNull("friend_id") }.map(Self.decodeFriend)
        let hasMore = friends.count > limit
        if hasMore { friends.removeLast() }
        return (friends, horizon, hasMore)
    }

    /// Friendship changes (new, renamed, removed) after `cursor` below the snapshot's horizon, in stream order, as
    /// sync reads `changes`: a cursor never skips a transaction that commits later. The cursor to continue from:
    /// the last row's, or the horizon when everything below it was returned.
    func changes(appId: Int64, userId: String, after cursor: SyncCursor, limit: Int)
        async throws -> (friends: [Friend], removed: [String], next: SyncCursor, hasMore: Bool)
    {
        let rows = try await database.query(
            """
            WITH horizon AS (SELECT \(unescaped: StreamHorizon.columns)),
            page AS (
                SELECT \(unescaped: Self.friendColumns), \(unescaped: PublicProfile.columns(of: "u", prefix: "u_"))
                FROM friendships f JOIN users u ON u.app_id = f.app_id AND u.id = f.friend_id
                WHERE f.app_id = \(appId) AND f.user_id = \(userId)
                  AND (f.xid, f.position) > (\(String(cursor.xid))::xid8, \(cursor.position))
                  AND f.xid < (SELECT xmin FROM horizon)
                ORDER BY f.xid, f.position
                LIMIT \(limit + 1))
            SELECT h.xmin::text AS horizon, h.on_standby, page.* FROM horizon h LEFT JOIN page ON true
            ORDER BY page.xid::xid8, page.position
            """)
        let horizon = SyncCursor(xid: UInt64(try rows[0].decode("horizon", as: String.self)) ?? 0, position: 0)
        try await StreamHorizon.settle(rows[0], horizon: horizon.xid, on: database)
        var friends: [Friend] = []
        var removed: [String] = []
        var last = cursor
        var returned = 0
        for row in rows where !row.isNull("friend_id") {
            returned += 1
            if returned > limit { return (friends, removed, last, true) }
            last = SyncCursor(
                xid: UInt64(try row.decode("xid", as: String.self)) ?? 0, position: try row.decode("position"))
            if try row.decode("active", as: Bool.self) {
                friends.append(try Self.decodeFriend(row))
            } else {
                removed.append(try row.decode("friend_id"))
            }
        }
        return (friends, removed, horizon.atLeast(last).atLeast(cursor), false)
    }

    // MARK: Requests

    static let requestColumns = "r.id, r.from_id, r.to_id, r.message, r.status, r.created_at, r.handled_at"

    static func decodeRequest(_ row: PostgresRow, profile: Bool) throws -> FriendRequest {
        FriendRequest(
            id: String(try row.decode("id", as: Int64.self)), fromId: try row.decode("from_id"),
            toId: try row.decode("to_id"), message: try row.decode("message"),
            status: FriendRequestStatus(rawValue: try row.decode("status")) ?? .pending,
            createdAt: try row.decode("created_at"), handledAt: try row.decode("handled_at"),
            user: profile && !row.isNull("u_id") ? try PublicProfile(row: row, prefix: "u_") : nil)
    }

    func pendingRequest(on connection: PostgresConnection, appId: Int64, from: String, to: String) async throws
        -> FriendRequest?
    {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: Self.requestColumns) FROM friend_requests r
            WHERE r.app_id = \(appId) AND r.from_id = \(from) AND r.to_id = \(to) AND r.status = 'pending'
            """)
        return try rows.first.map { try Self.decodeRequest($0, profile: false) }
    }

    func request(on connection: PostgresConnection, appId: Int64, id: Int64) async throws -> FriendRequest? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: Self.requestColumns) FROM friend_requests r
            WHERE r.app_id = \(appId) AND r.id = \(id)
            """)
        return try rows.first.map { try Self.decodeRequest($0, profile: false) }
    }

    func insertRequest(
        on connection: PostgresConnection, appId: Int64, from: String, to: String, message: String,
        status: FriendRequestStatus
    ) async throws -> FriendRequest {
        let rows = try await connection.query(
            """
            INSERT INTO friend_requests AS r (app_id, from_id, to_id, message, status, handled_at)
            VALUES (\(appId), \(from), \(to), \(message), \(status.rawValue),
                    CASE WHEN \(status.rawValue) = 'pending' THEN NULL ELSE now() END)
            RETURNING \(unescaped: Self.requestColumns)
            """)
        return try Self.decodeRequest(rows[0], profile: false)
    }

    /// Moves a pending request to `status`; nil when it was not pending any more.
    func handle(on connection: PostgresConnection, appId: Int64, id: Int64, status: FriendRequestStatus) async throws
        -> FriendRequest?
    {
        let rows = try await connection.query(
            """
            UPDATE friend_requests r SET status = \(status.rawValue), handled_at = now()
            WHERE r.app_id = \(appId) AND r.id = \(id) AND r.status = 'pending'
            RETURNING \(unescaped: Self.requestColumns)
            """)
        return try rows.first.map { try Self.decodeRequest($0, profile: false) }
    }

    /// Closes the pending request from `from` to `to`, if any, with `status` (a block, a new friendship).
    func closePending(
        on connection: PostgresConnection, appId: Int64, from: String, to: String, status: FriendRequestStatus
    ) async throws -> FriendRequest? {
        let rows = try await connection.query(
            """
            UPDATE friend_requests r SET status = \(status.rawValue), handled_at = now()
            WHERE r.app_id = \(appId) AND r.status = 'pending' AND r.from_id = \(from) AND r.to_id = \(to)
            RETURNING \(unescaped: Self.requestColumns)
            """)
        return try rows.first.map { try Self.decodeRequest($0, profile: false) }
    }

    /// Closes every pending request from or to the user: theirs withdrawn, those to them rejected.
    func closeAllPending(on connection: PostgresConnection, appId: Int64, userId: String) async throws
        -> [FriendRequest]
    {
        let rows = try await connection.query(
            """
            UPDATE friend_requests r
            SET status = CASE WHEN r.from_id = \(userId) THEN 'withdrawn' ELSE 'rejected' END, handled_at = now()
            WHERE r.app_id = \(appId) AND r.status = 'pending' AND (r.from_id = \(userId) OR r.to_id = \(userId))
            RETURNING \(unescaped: Self.requestColumns)
            """)
        return try rows.map { try Self.decodeRequest($0, profile: false) }
    }

    /// The caller's requests in one direction, newest first, with the other side's profile; keyset-paged by id.
    func requests(
        appId: Int64, userId: String, incoming: Bool, pendingOnly: Bool, before: Int64?, limit: Int
    ) async throws -> (requests: [FriendRequest], hasMore: Bool) {
        let mine = incoming ? "r.to_id" : "r.from_id"
        let other = incoming ? "r.from_id" : "r.to_id"
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.requestColumns), \(unescaped: PublicProfile.columns(of: "u", prefix: "u_"))
            FROM friend_requests r LEFT JOIN users u ON u.app_id = r.app_id AND u.id = \(unescaped: other)
            WHERE r.app_id = \(appId) AND \(unescaped: mine) = \(userId)
              AND (NOT \(pendingOnly) OR r.status = 'pending')
              AND r.id < \(before ?? Int64.max)
            ORDER BY r.id DESC
            LIMIT \(limit + 1)
            """)
        var requests = try rows.map { try Self.decodeRequest($0, profile: true) }
        let hasMore = requests.count > limit
        if hasMore { requests.removeLast() }
        return (requests, hasMore)
    }
}
