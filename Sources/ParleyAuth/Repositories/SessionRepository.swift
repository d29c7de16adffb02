import Foundation
import ParleyPostgres

/// A session that was ended, as read back from the database.
struct EndedSessionRow: Sendable {
    var session: EndedSession
    var endedAt: Date
}

/// How far a session can still go: tokens issued for it never outlive its refresh token, so no token renews
/// itself into a session longer than a refresh would allow.
enum SessionReach: Sendable, Hashable {
    case until(Date)
    /// Open, but its refresh token expired (or was used without a successor): no new token.
    case exhausted
    case ended
}

/// What presenting a refresh token led to.
enum RefreshOutcome: Sendable {
    case rotated(user: StoredUser, appId: Int64, sessionId: String, expiresAt: Date)
    /// Unknown (or another app's) token.
    case unknown
    case expired
    case sessionEnded
    /// The token had been used before: the session was ended (theft detection).
    case reused([EndedSessionRow])
}

/// Device sessions and their refresh tokens; every statement names the app.
struct SessionRepository: Sendable {
    static let endedChannel = "parley_session_ended"

    let database: PostgresClient

    static let endedColumns = "id, app_id, user_id, end_reason, ended_by_device_model, language, ended_at"

    static func decodeEnded(_ row: PostgresRow) throws -> EndedSessionRow {
        let reason = SessionEndReason(rawValue: try row.decode("end_reason", as: String.self)) ?? .revoked
        return EndedSessionRow(
            session: EndedSession(
                sessionId: try row.decode("id"), userId: try row.decode("user_id"),
                appId: try row.decode("app_id"), reason: reason,
                deviceModel: try row.decode("ended_by_device_model"),
                language: SessionLanguage(rawValue: try row.decode("language", as: String.self)) ?? .en),
            endedAt: try row.decode("ended_at"))
    }

    // MARK: Opening

    /// Ends the sessions the app's policy says a new login on `device` displaces (inside the login
    /// transaction, after the user row was locked). A session of the same device id is a `relogin`.
    func endDisplaced(
        on connection: PostgresConnection, appId: Int64, userId: String, policy: SessionPolicy,
        device: DeviceInfo
    ) async throws -> [EndedSessionRow] {
        guard policy != .unlimited else { return [] }
        let samePlatformOnly = policy == .onePerPlatform
        let rows = try await connection.query(
            """
            WITH ended AS (
                UPDATE sessions
                SET ended_at = now(),
                    end_reason = CASE WHEN device_id = \(device.deviceId) AND device_id <> ''
                                      THEN 'relogin' ELSE 'account_conflict' END,
                    ended_by_device_model = \(device.deviceModel)
                WHERE app_id = \(appId) AND user_id = \(userId) AND ended_at IS NULL
                  AND (NOT \(samePlatformOnly) OR platform = \(device.platform))
                RETURNING \(unescaped: Self.endedColumns))
            SELECT ended.*, pg_notify(\(Self.endedChannel), ended.id)::text AS notified FROM ended
            """)
        return try rows.map(Self.decodeEnded)
    }

    /// Inserts a session and its first refresh token.
    func insert(
        on connection: PostgresConnection, appId: Int64, userId: String, device: DeviceInfo, origin: SessionOrigin,
        refreshTokenHash: [UInt8], refreshExpiresAt: Date
    ) async throws -> String {
        let sessionId = Identifiers.newSessionID()
        _ = try await connection.query(
            """
            WITH created AS (
                INSERT INTO sessions (id, app_id, user_id, platform, device_id, device_model, ip_address, origin,
                                      language)
                VALUES (\(sessionId), \(appId), \(userId), \(device.platform), \(device.deviceId), \(device.deviceModel),
                        \(device.ipAddress), \(origin.rawValue), \(device.language.rawValue))
                RETURNING id)
            INSERT INTO refresh_tokens (token_hash, app_id, session_id, expires_at)
            SELECT \(refreshTokenHash), \(appId), created.id, \(refreshExpiresAt) FROM created
            """)
        return sessionId
    }

    /// The open signed session a signed login on `device` renews: the user's, on the same platform and device id
    /// (both may be empty), the most recently seen. Inside the login transaction, after the user row was locked.
    func renewable(on connection: PostgresConnection, appId: Int64, userId: String, device: DeviceInfo) async throws
        -> String?
    {
        try await connection.query(
            """
            SELECT id FROM sessions
            WHERE app_id = \(appId) AND user_id = \(userId) AND ended_at IS NULL AND origin = 'signed'
              AND platform = \(device.platform) AND device_id = \(device.deviceId)
            ORDER BY last_seen_at DESC LIMIT 1
            """
        ).first.map { try $0.decode("id", as: String.self) }
    }

    /// Gives a session a new refresh token in place of all it had (a superseded one is then unknown, not reused:
    /// presenting it answers 1037 and leaves the session alone) and records the device's latest details.
    func renew(
        on connection: PostgresConnection, sessionId: String, device: DeviceInfo, refreshTokenHash: [UInt8],
        refreshExpiresAt: Date
    ) async throws {
        _ = try await connection.query(
            """
            WITH seen AS (
                UPDATE sessions SET last_seen_at = now(), ip_address = \(device.ipAddress),
                                    device_model = \(device.deviceModel), language = \(device.language.rawValue)
                WHERE id = \(sessionId) RETURNING id, app_id),
                 superseded AS (DELETE FROM refresh_tokens WHERE session_id = \(sessionId))
            INSERT INTO refresh_tokens (token_hash, app_id, session_id, expires_at)
            SELECT \(refreshTokenHash), seen.app_id, seen.id, \(refreshExpiresAt) FROM seen
            """)
    }

    // MARK: Refresh

    /// Rotates a refresh token in one transaction: the row is locked (`FOR UPDATE`), so of two concurrent uses
    /// of one token exactly one succeeds and the other is treated as reuse.
    func rotate(
        tokenHash: [UInt8], appId: Int64?, newTokenHash: [UInt8], defaultLifetime: Int,
        ipAddress: String
    ) async throws -> RefreshOutcome {
        let userColumns = UserRepository.columns.split(separator: ",")
            .map { "u." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        return try await database.withTransaction { connection in
            let rows = try await connection.query(
                """
                SELECT rt.session_id, rt.used_at, rt.expires_at <= now() AS expired, s.ended_at, s.app_id,
                       coalesce(a.refresh_token_ttl_seconds, \(defaultLifetime)) AS lifetime, \(unescaped: userColumns)
                FROM refresh_tokens rt
                JOIN sessions s ON s.id = rt.session_id
                JOIN users u ON u.app_id = s.app_id AND u.id = s.user_id
                JOIN apps a ON a.id = s.app_id
                WHERE rt.token_hash = \(tokenHash) AND (\(appId)::bigint IS NULL OR rt.app_id = \(appId))
                FOR UPDATE OF rt, s
                """)
            guard let row = rows.first else { return RefreshOutcome.unknown }
            let sessionId = try row.decode("session_id", as: String.self)
            let sessionAppId = try row.decode("app_id", as: Int64.self)
            if !row.isNull("ended_at") { return .sessionEnded }
            if !row.isNull("used_at") {
                let ended = try await end(
                    on: connection, appId: sessionAppId, userId: nil, sessionId: sessionId,
                    reason: .tokenReuse)
                return .reused(ended)
            }
            if try row.decode("expired", as: Bool.self) { return .expired }
            let user = try UserRepository.decode(row)
            let lifetime = try row.decode("lifetime", as: Int.self)
            let inserted = try await connection.query(
                """
                WITH used AS (UPDATE refresh_tokens SET used_at = now() WHERE token_hash = \(tokenHash)),
                     seen AS (UPDATE sessions SET last_seen_at = now(), ip_address = \(ipAddress)
                              WHERE id = \(sessionId))
                INSERT INTO refresh_tokens (token_hash, app_id, session_id, expires_at)
                VALUES (\(newTokenHash), \(sessionAppId), \(sessionId), now() + make_interval(secs => \(lifetime)))
                RETURNING expires_at
                """)
            return .rotated(
                user: user, appId: sessionAppId, sessionId: sessionId,
                expiresAt: try inserted[0].decode(0, as: Date.self))
        }
    }

    // MARK: Ending

    /// Ends one session (`sessionId`) or all of a user's (`sessionId` nil) and notifies the other instances.
    /// `userId` nil only for a session already identified through its refresh token.
    func end(appId: Int64, userId: String?, sessionId: String?, reason: SessionEndReason) async throws
        -> [EndedSessionRow]
    {
        try await database.withConnection { connection in
            try await end(on: connection, appId: appId, userId: userId, sessionId: sessionId, reason: reason)
        }
    }

    func end(
        on connection: PostgresConnection, appId: Int64, userId: String?, sessionId: String?,
        reason: SessionEndReason
    ) async throws -> [EndedSessionRow] {
        precondition(userId != nil || sessionId != nil, "refusing to end every session of an app")
        let rows = try await connection.query(
            """
            WITH ended AS (
                UPDATE sessions SET ended_at = now(), end_reason = \(reason.rawValue)
                WHERE app_id = \(appId) AND ended_at IS NULL
                  AND (\(userId)::text IS NULL OR user_id = \(userId))
                  AND (\(sessionId)::text IS NULL OR id = \(sessionId))
                RETURNING \(unescaped: Self.endedColumns))
            SELECT ended.*, pg_notify(\(Self.endedChannel), ended.id)::text AS notified FROM ended
            """)
        return try rows.map(Self.decodeEnded)
    }

    // MARK: Reading

    func listActive(appId: Int64, userId: String, currentSessionId: String) async throws -> [SessionInfo] {
        let rows = try await database.query(
            """
            SELECT id, platform, device_id, device_model, ip_address, created_at, last_seen_at FROM sessions
            WHERE app_id = \(appId) AND user_id = \(userId) AND ended_at IS NULL
            ORDER BY last_seen_at DESC
            """)
        return try rows.map { row in
            let id = try row.decode("id", as: String.self)
            return SessionInfo(
                id: id, platform: try row.decode("platform"), deviceId: try row.decode("device_id"),
                deviceModel: try row.decode("device_model"), ipAddress: try row.decode("ip_address"),
                createdAt: try row.decode("created_at"), lastSeenAt: try row.decode("last_seen_at"),
                current: id == currentSessionId)
        }
    }

    /// Records the session's activity and answers until when it can go on: the expiry of its live refresh token
    /// (nil when it has none left); `.ended` when the session is over.
    func touch(appId: Int64, sessionId: String, ipAddress: String) async throws -> SessionReach {
        let rows = try await database.query(
            """
            UPDATE sessions s SET last_seen_at = now(), ip_address = \(ipAddress)
            WHERE s.app_id = \(appId) AND s.id = \(sessionId) AND s.ended_at IS NULL
            RETURNING (SELECT max(rt.expires_at) FROM refresh_tokens rt
                       WHERE rt.session_id = s.id AND rt.used_at IS NULL AND rt.expires_at > now()) AS refresh_until
            """)
        guard let row = rows.first else { return .ended }
        return row.isNull("refresh_until") ? .exhausted : .until(try row.decode("refresh_until", as: Date.self))
    }

    /// Sessions ended at or after `since` (start-up load and the poll's lookback window).
    func endedSince(_ since: Date) async throws -> [EndedSessionRow] {
        try await database.query(
            """
            SELECT \(unescaped: Self.endedColumns) FROM sessions WHERE ended_at >= \(since)
            """
        ).map(Self.decodeEnded)
    }

    /// Sessions ended within the last `seconds` by the database's clock (the start-up load).
    func endedWithin(seconds: Int) async throws -> [EndedSessionRow] {
        try await database.query(
            """
            SELECT \(unescaped: Self.endedColumns) FROM sessions
            WHERE ended_at >= now() - make_interval(secs => \(seconds))
            """
        ).map(Self.decodeEnded)
    }

    func ended(id: String) async throws -> EndedSessionRow? {
        try await database.query(
            """
            SELECT \(unescaped: Self.endedColumns) FROM sessions WHERE id = \(id) AND ended_at IS NOT NULL
            """
        ).first.map(Self.decodeEnded)
    }

    /// Housekeeping: expired refresh tokens, refresh tokens of ended sessions, expired nonces.
    func purgeExpired() async throws {
        _ = try await database.query("DELETE FROM refresh_tokens WHERE expires_at < now()")
        _ = try await database.query(
            """
            DELETE FROM refresh_tokens rt USING sessions s
            WHERE rt.session_id = s.id AND s.ended_at < now() - interval '1 day'
            """)
        _ = try await database.query("DELETE FROM request_nonces WHERE expires_at < now()")
    }
}
