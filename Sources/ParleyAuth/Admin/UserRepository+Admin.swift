import Foundation
import ParleyPostgres

/// The admin API's reads and writes of users (always within the signing app).
extension UserRepository {
    /// Creates a user the app's backend manages (no username, no password; the app's current privacy version, as a
    /// signed login does) with the given profile; false when the id is taken (the caller then updates it).
    func insertManaged(
        on connection: PostgresConnection, appId: Int64, userId: String, profile: ProfileUpdate, consentedVersion: Int
    ) async throws -> Bool {
        let avatar: String? = profile.avatar ?? nil
        let ex: String? = (profile.ex ?? nil).map(\.serializedString)
        return try await !connection.query(
            """
            INSERT INTO users (app_id, id, nickname, avatar, signature, ex, searchable, privacy_version_consented,
                               consented_at)
            VALUES (\(appId), \(userId), coalesce(\(profile.nickname), \(userId)), \(avatar),
                    coalesce(\(profile.signature), ''), \(ex), coalesce(\(profile.searchable), true),
                    \(consentedVersion), now())
            ON CONFLICT (app_id, id) DO NOTHING
            RETURNING id
            """
        ).isEmpty
    }

    /// The user with its open sessions, for `GET /api/admin/users/{userId}`.
    func adminView(appId: Int64, userId: String) async throws -> AdminUser? {
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM users WHERE app_id = \(appId) AND id = \(userId)
            """)
        guard let row = rows.first else { return nil }
        let user = try Self.decode(row)
        let sessions = try await database.query(
            """
            SELECT id, platform, device_id, device_model, created_at, last_seen_at FROM sessions
            WHERE app_id = \(appId) AND user_id = \(userId) AND ended_at IS NULL
            ORDER BY last_seen_at DESC, id
            """
        ).map { row in
            AdminSession(
                id: try row.decode("id"), platform: try row.decode("platform"), deviceId: try row.decode("device_id"),
                deviceModel: try row.decode("device_model"), createdAt: try row.decode("created_at"),
                lastSeenAt: try row.decode("last_seen_at"))
        }
        let profile = user.profile
        return AdminUser(
            id: profile.id, username: profile.username, nickname: profile.nickname, avatar: profile.avatar,
            signature: profile.signature, ex: profile.ex, searchable: profile.searchable,
            createdAt: profile.createdAt, managedByApp: user.passwordHash == nil && profile.username == nil,
            banned: user.bannedAt != nil, bannedAt: user.bannedAt, deleted: user.deletedAt != nil,
            deletedAt: user.deletedAt, lastActiveAt: sessions.map(\.lastSeenAt).max(), sessions: sessions)
    }
}
