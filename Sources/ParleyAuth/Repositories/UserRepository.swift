import Foundation
import ParleyHTTP
import ParleyPostgres

/// A user row with the password hash (never leaves this feature).
struct StoredUser: Sendable {
    var profile: UserProfile
    var passwordHash: String?
    /// When the account was banned; nil while it may sign in.
    var bannedAt: Date?
    /// When the account was deleted (the row stays, anonymised); nil for a live account.
    var deletedAt: Date?
}

/// Users, always addressed by (app id, user id): there is no query without the tenant.
struct UserRepository: Sendable {
    let database: PostgresClient

    static let columns =
        "id, username, password_hash, nickname, avatar, signature, ex, searchable, privacy_version_consented, "
        + "created_at, banned_at, deleted_at"

    static func decode(_ row: PostgresRow) throws -> StoredUser {
        StoredUser(
            profile: UserProfile(
                id: try row.decode("id"), username: try row.decode("username"),
                nickname: try row.decode("nickname"), avatar: try row.decode("avatar"),
                signature: try row.decode("signature"), ex: try PublicProfile.ex(row),
                searchable: try row.decode("searchable"),
                privacyVersion: try row.decode("privacy_version_consented"),
                createdAt: try row.decode("created_at")),
            passwordHash: try row.decode("password_hash"), bannedAt: try row.decode("banned_at"),
            deletedAt: try row.decode("deleted_at"))
    }

    /// The account a login names, and whether `deviceId` (when not empty) already had a session of it: such a
    /// device is throttled on its own failures only.
    func loginCandidate(appId: Int64, username: String, deviceId: String) async throws
        -> (user: StoredUser?, knownDevice: Bool)
    {
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.columns),
                   EXISTS (SELECT 1 FROM sessions s WHERE s.app_id = users.app_id AND s.user_id = users.id
                           AND s.device_id = \(deviceId) AND s.device_id <> '') AS known_device
            FROM users WHERE app_id = \(appId) AND username = \(username)
            """)
        guard let row = rows.first else { return (nil, false) }
        return (try Self.decode(row), try row.decode("known_device", as: Bool.self))
    }

    /// Bans (`banned` true) or lets the user sign in again; false when the app has no such user. Inside the caller's
    /// transaction, which ends the sessions of a banned user.
    func setBanned(on connection: PostgresConnection, appId: Int64, userId: String, banned: Bool) async throws -> Bool {
        try await !connection.query(
            """
            UPDATE users SET banned_at = CASE WHEN \(banned) THEN coalesce(banned_at, now()) END, updated_at = now()
            WHERE app_id = \(appId) AND id = \(userId) RETURNING id
            """
        ).isEmpty
    }

    /// Inserts a built-in account on `connection` (inside the registration transaction); throws 1040 when the
    /// username is taken (the failed statement has aborted the transaction, which must roll back).
    func insertAccount(
        on connection: PostgresConnection, appId: Int64, userId: String, username: String, passwordHash: String,
        nickname: String, avatar: String?, consentedVersion: Int
    ) async throws -> StoredUser {
        do {
            let rows = try await connection.query(
                """
                INSERT INTO users (app_id, id, username, password_hash, nickname, avatar, privacy_version_consented,
                                   consented_at)
                VALUES (\(appId), \(userId), \(username), \(passwordHash), \(nickname), \(avatar),
                        \(consentedVersion), now())
                RETURNING \(unescaped: Self.columns)
                """)
            return try Self.decode(rows[0])
        } catch let error as PostgresError where error.isUniqueViolation && error.constraint == "users_app_username" {
            throw APIError.usernameTaken
        }
    }

    /// The user with this external id, created on first use (signed logins of apps with their own user base).
    /// The app's backend vouches for the user, so a new user starts with the app's current privacy version.
    func findOrCreateExternal(
        on connection: PostgresConnection, appId: Int64, userId: String,
        consentedVersion: Int
    ) async throws -> StoredUser {
        // Two attempts: when a concurrent transaction inserts the same user first, our INSERT does nothing and
        // our statement's snapshot predates their row; the second statement sees it.
        for _ in 0..<2 {
            if let user = try await insertOrSelectExternal(
                on: connection, appId: appId, userId: userId,
                consentedVersion: consentedVersion)
            {
                return user
            }
        }
        throw PostgresError(kind: .server, message: "external user vanished during login")
    }

    private func insertOrSelectExternal(
        on connection: PostgresConnection, appId: Int64, userId: String,
        consentedVersion: Int
    ) async throws -> StoredUser? {
        let rows = try await connection.query(
            """
            WITH created AS (
                INSERT INTO users (app_id, id, nickname, privacy_version_consented, consented_at)
                VALUES (\(appId), \(userId), \(userId), \(consentedVersion), now())
                ON CONFLICT (app_id, id) DO NOTHING
                RETURNING \(unescaped: Self.columns))
            SELECT * FROM created
            UNION ALL
            SELECT \(unescaped: Self.columns) FROM users WHERE app_id = \(appId) AND id = \(userId)
            LIMIT 1
            """)
        return try rows.first.map(Self.decode)
    }

    /// Locks the user row for the rest of the transaction: logins of one user then run one after another, so
    /// the session policy sees every concurrent login.
    func lockForLogin(on connection: PostgresConnection, appId: Int64, userId: String) async throws -> StoredUser? {
        let rows = try await connection.query(
            """
            SELECT \(unescaped: Self.columns) FROM users WHERE app_id = \(appId) AND id = \(userId) FOR UPDATE
            """)
        return try rows.first.map(Self.decode)
    }

    func find(appId: Int64, userId: String) async throws -> StoredUser? {
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM users WHERE app_id = \(appId) AND id = \(userId)
            """)
        return try rows.first.map(Self.decode)
    }

    /// Public profiles of those of `ids` that exist in the app, in the order asked.
    func publicProfiles(appId: Int64, ids: [String]) async throws -> [PublicProfile] {
        guard !ids.isEmpty else { return [] }
        let rows = try await database.query(
            """
            SELECT \(unescaped: PublicProfile.columns) FROM users
            WHERE app_id = \(appId) AND id = ANY(\(PostgresTextArray(ids))::text[])
            """)
        var byID: [String: PublicProfile] = [:]
        for row in rows {
            let profile = try PublicProfile(row: row)
            byID[profile.id] = profile
        }
        var seen = Set<String>()
        return ids.compactMap { id in seen.insert(id).inserted ? byID[id] : nil }
    }

    /// Applies `update` in the caller's transaction (the row stays locked until it ends); nil when the user is
    /// gone. `publicChanged`: a field other users see (nickname, avatar, signature, ex) now differs.
    func updateProfile(on connection: PostgresConnection, appId: Int64, userId: String, update: ProfileUpdate)
        async throws -> (user: StoredUser, publicChanged: Bool)?
    {
        let setAvatar = update.avatar != nil
        let newAvatar: String? = update.avatar ?? nil
        let setEx = update.ex != nil
        let newEx: String? = (update.ex ?? nil).map(\.serializedString)
        let rows = try await connection.query(
            """
            WITH old AS (
                SELECT nickname AS old_nickname, avatar AS old_avatar, signature AS old_signature, ex AS old_ex
                FROM users WHERE app_id = \(appId) AND id = \(userId) FOR UPDATE)
            UPDATE users SET nickname = coalesce(\(update.nickname), nickname),
                             avatar = CASE WHEN \(setAvatar) THEN \(newAvatar) ELSE avatar END,
                             signature = coalesce(\(update.signature), signature),
                             ex = CASE WHEN \(setEx) THEN \(newEx) ELSE ex END,
                             searchable = coalesce(\(update.searchable), searchable),
                             updated_at = now()
            FROM old
            WHERE users.app_id = \(appId) AND users.id = \(userId)
            RETURNING \(unescaped: Self.columns),
                      (old_nickname, old_avatar, old_signature, old_ex)
                          IS DISTINCT FROM (nickname, avatar, signature, ex) AS public_changed
            """)
        guard let row = rows.first else { return nil }
        return (try Self.decode(row), try row.decode("public_changed"))
    }

    /// The privacy version the user accepted, from the database (the rare path after a policy bump).
    func consentedVersion(appId: Int64, userId: String) async throws -> Int? {
        let rows = try await database.query(
            """
            SELECT privacy_version_consented FROM users WHERE app_id = \(appId) AND id = \(userId)
            """)
        return try rows.first?.decode(0, as: Int.self)
    }

    /// Records consent to `version` (never lowers an earlier, higher consent).
    func recordConsent(appId: Int64, userId: String, version: Int) async throws -> Int? {
        try await recordConsent(on: nil, appId: appId, userId: userId, version: version)
    }

    /// The same inside the caller's transaction (`connection`), or on its own (nil).
    func recordConsent(on connection: PostgresConnection?, appId: Int64, userId: String, version: Int) async throws
        -> Int?
    {
        let query: PostgresQuery = """
            UPDATE users SET privacy_version_consented = greatest(privacy_version_consented, \(version)),
                             consented_at = now(), updated_at = now()
            WHERE app_id = \(appId) AND id = \(userId)
            RETURNING privacy_version_consented
            """
        return try await database.query(query, on: connection).first?.decode(0, as: Int.self)
    }

    // MARK: Deletion

    /// Anonymises a locked, live account (the row stays so that messages still name their sender): nickname '',
    /// no avatar, signature or `ex`, out of search, no password, `deleted_at` now; the username is kept reserved
    /// unless `freeUsername` (a grace period of zero).
    func anonymise(on connection: PostgresConnection, appId: Int64, userId: String, freeUsername: Bool) async throws {
        _ = try await connection.query(
            """
            UPDATE users SET nickname = '', avatar = NULL, signature = '', ex = NULL, searchable = false,
                             password_hash = NULL, deleted_at = now(), updated_at = now(),
                             username = CASE WHEN \(freeUsername) THEN NULL ELSE username END
            WHERE app_id = \(appId) AND id = \(userId)
            """)
    }

    /// Frees the usernames of accounts deleted at or before `deletedBefore` (so they may be registered again);
    /// returns how many.
    func freeDeletedUsernames(deletedBefore: Date, limit: Int = 1000) async throws -> Int {
        try await database.query(
            """
            UPDATE users SET username = NULL, updated_at = now()
            WHERE (app_id, id) IN (SELECT app_id, id FROM users
                                   WHERE deleted_at IS NOT NULL AND username IS NOT NULL
                                     AND deleted_at <= \(deletedBefore)
                                   LIMIT \(limit))
            RETURNING id
            """
        ).count
    }
}
