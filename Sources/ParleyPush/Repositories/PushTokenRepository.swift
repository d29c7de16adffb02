import ParleyPostgres

/// Device tokens: bind, unbind, and the cleanup of ended sessions and dead tokens.
public struct PushTokenRepository: Sendable {
    let database: PostgresClient

    public init(database: PostgresClient) { self.database = database }

    public struct Binding: Sendable, Equatable {
        public var vendor: PushVendor
        public var token: String
        public var deviceId: String
        public var bundleId: String
        public var environment: PushEnvironment
        /// The app's own id for the user as the device reported it (the legacy route's `uid`); nil otherwise.
        public var appUid: String? = nil
    }

    /// Binds the token to the session (taking it from any previous owner in the app) and drops the session's
    /// previous token of the same vendor: a device has one token per vendor, and a refreshed token replaces the
    /// old one instead of doubling its pushes.
    func bind(_ binding: Binding, appId: Int64, userId: String, sessionId: String) async throws {
        _ = try await database.query(
            """
            WITH replaced AS (
                DELETE FROM push_tokens
                WHERE app_id = \(appId) AND session_id = \(sessionId) AND vendor = \(binding.vendor.rawValue)
                  AND token <> \(binding.token))
            INSERT INTO push_tokens (app_id, vendor, token, user_id, session_id, device_id, bundle_id, environment,
                                     app_uid)
            VALUES (\(appId), \(binding.vendor.rawValue), \(binding.token), \(userId), \(sessionId), \(binding.deviceId),
                    \(binding.bundleId), \(binding.environment.rawValue), \(binding.appUid))
            ON CONFLICT (app_id, vendor, token) DO UPDATE SET
                user_id = EXCLUDED.user_id, session_id = EXCLUDED.session_id, device_id = EXCLUDED.device_id,
                bundle_id = EXCLUDED.bundle_id, environment = EXCLUDED.environment, app_uid = EXCLUDED.app_uid,
                updated_at = now()
            """)
    }

    /// Removes the user's token (any vendor, or `vendor`); returns how many rows went.
    func unbind(appId: Int64, userId: String, token: String, vendor: PushVendor? = nil) async throws -> Int {
        // APNs tokens are stored lower-cased; clients may send them in either case.
        try await database.query(
            """
            DELETE FROM push_tokens
            WHERE app_id = \(appId) AND user_id = \(userId) AND token IN (\(token), \(token.lowercased()))
              AND (\(vendor?.rawValue)::text IS NULL OR vendor = \(vendor?.rawValue))
            RETURNING vendor
            """
        ).count
    }

    /// Removes every token the session bound (legacy unbind without a token).
    func unbind(appId: Int64, sessionId: String) async throws -> Int {
        try await database.query(
            """
            DELETE FROM push_tokens WHERE app_id = \(appId) AND session_id = \(sessionId) RETURNING vendor
            """
        ).count
    }

    /// Removes the tokens of an ended session (logout, displaced, revoked).
    public func unbindEndedSession(_ sessionId: String) async throws {
        _ = try await database.query("DELETE FROM push_tokens WHERE session_id = \(sessionId)")
    }

    /// Removes tokens the push service called dead.
    func delete(appId: Int64, tokens: [(PushVendor, String)]) async throws {
        guard !tokens.isEmpty else { return }
        _ = try await database.query(
            """
            DELETE FROM push_tokens t
            USING unnest(\(PostgresTextArray(tokens.map(\.0.rawValue)))::text[], \(PostgresTextArray(tokens.map(\.1)))::text[])
                AS dead(vendor, token)
            WHERE t.app_id = \(appId) AND t.vendor = dead.vendor AND t.token = dead.token
            """)
    }
}

extension PushTokenRepository {
    /// Removes tokens whose session has ended: the backstop under the session-end events (which a busy instance
    /// may shed). Returns how many went.
    func sweepEndedSessions() async throws -> Int {
        try await database.query(
            """
            DELETE FROM push_tokens t USING sessions s
            WHERE s.id = t.session_id AND s.ended_at IS NOT NULL
            RETURNING t.vendor
            """
        ).count
    }
}
