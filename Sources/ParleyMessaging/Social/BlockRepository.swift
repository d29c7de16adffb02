import Foundation
import ParleyAuth
import ParleyPostgres

/// Who blocked whom, within one app. Writers run on the caller's transaction after `FriendRepository.lockUsers`.
struct BlockRepository: Sendable {
    let database: PostgresClient

    /// The new block, or nil when `blocker` had blocked `blocked` already.
    func insert(on connection: PostgresConnection, appId: Int64, blocker: String, blocked: String) async throws
        -> Date?
    {
        let rows = try await connection.query(
            """
            INSERT INTO user_blocks (app_id, blocker_id, blocked_id) VALUES (\(appId), \(blocker), \(blocked))
            ON CONFLICT DO NOTHING
            RETURNING created_at
            """)
        return try rows.first?.decode("created_at")
    }

    func delete(on connection: PostgresConnection, appId: Int64, blocker: String, blocked: String) async throws -> Bool
    {
        let rows = try await connection.query(
            """
            DELETE FROM user_blocks WHERE app_id = \(appId) AND blocker_id = \(blocker) AND blocked_id = \(blocked)
            RETURNING blocked_id
            """)
        return !rows.isEmpty
    }

    /// Removes every block the user made or is subject to.
    func deleteAll(on connection: PostgresConnection, appId: Int64, involving userId: String) async throws {
        _ = try await connection.query(
            """
            DELETE FROM user_blocks WHERE app_id = \(appId) AND (blocker_id = \(userId) OR blocked_id = \(userId))
            """)
    }

    /// When `blocker` blocked `blocked`, if they did.
    func block(on connection: PostgresConnection, appId: Int64, blocker: String, blocked: String) async throws
        -> Date?
    {
        let rows = try await connection.query(
            """
            SELECT created_at FROM user_blocks
            WHERE app_id = \(appId) AND blocker_id = \(blocker) AND blocked_id = \(blocked)
            """)
        return try rows.first?.decode("created_at")
    }

    func count(on connection: PostgresConnection, appId: Int64, blocker: String) async throws -> Int {
        let rows = try await connection.query(
            "SELECT count(*) AS n FROM user_blocks WHERE app_id = \(appId) AND blocker_id = \(blocker)")
        return try rows[0].decode("n", as: Int.self)
    }

    /// The caller's blocks, newest first, keyset-paged by (created_at, blocked_id).
    func blocks(appId: Int64, blocker: String, after cursor: BlockCursor?, limit: Int) async throws
        -> (blocks: [BlockedUser], hasMore: Bool)
    {
        let rows = try await database.query(
            """
            SELECT b.blocked_id, b.created_at, \(unescaped: PublicProfile.columns(of: "u", prefix: "u_"))
            FROM user_blocks b JOIN users u ON u.app_id = b.app_id AND u.id = b.blocked_id
            WHERE b.app_id = \(appId) AND b.blocker_id = \(blocker)
              AND (\(cursor == nil) OR (b.created_at, b.blocked_id) < (\(cursor?.createdAt ?? Date()), \(cursor?.userId ?? "")))
            ORDER BY b.created_at DESC, b.blocked_id DESC
            LIMIT \(limit + 1)
            """)
        var blocks = try rows.map { row in
            BlockedUser(
                userId: try row.decode("blocked_id"), createdAt: try row.decode("created_at"),
                user: try PublicProfile(row: row, prefix: "u_"))
        }
        let hasMore = blocks.count > limit
        if hasMore { blocks.removeLast() }
        return (blocks, hasMore)
    }
}

/// Where a block-list page ends: the last entry's time (microseconds, as PostgreSQL keeps it) and user.
struct BlockCursor: Sendable, Hashable, CustomStringConvertible {
    var createdAt: Date
    var userId: String

    init(createdAt: Date, userId: String) {
        self.createdAt = createdAt
        self.userId = userId
    }

    init?(_ text: String) {
        guard let dash = text.firstIndex(of: "~"), MessagingInput.isDecimal(text[..<dash]),
            let micros = Int64(text[..<dash]),
            MessagingInput.isIdentifier(text[text.index(after: dash)...])
        else { return nil }
        createdAt = Date(timeIntervalSince1970: Double(micros) / 1_000_000)
        userId = String(text[text.index(after: dash)...])
    }

    var description: String {
        "\(Int64((createdAt.timeIntervalSince1970 * 1_000_000).rounded()))~\(userId)"
    }
}
