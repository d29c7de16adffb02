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

    /// Binds the token to the session and drops the previous token of the same vendor and device: a device has one
    /// token per vendor, and a refreshed token replaces the old one instead of doubling its pushes. The device is the
    /// binding's `deviceId`, else the one the session logged in with. A session that names no device keeps every
    /// token bound to it: devices whose logins named none share one session (seed 001's SDK logs in so), and one
    /// device's token must not unbind another's; a stale token goes at the vendor's first "unregistered" answer.
    /// A token another user holds moves only from the same device or once that user's session has ended: false,
    /// and nothing changed, otherwise.
    func bind(_ binding: Binding, appId: Int64, userId: String, sessionId: String) async throws -> Bool {
        do {
            return try await database.withTransaction { connection in
                let bound = try await connection.query(
                    """
                    INSERT INTO push_tokens (app_id, vendor, token, user_id, session_id, device_id, bundle_id,
                                             environment, app_uid)
                    SELECT \(appId), \(binding.vendor.rawValue), \(binding.token), \(userId), \(sessionId),
                           coalesce(nullif(\(binding.deviceId), ''),
                                    (SELECT s.device_id FROM sessions s WHERE s.id = \(sessionId)), ''),
                           \(binding.bundleId), \(binding.environment.rawValue), \(binding.appUid)
                    ON CONFLICT (app_id, vendor, token) DO UPDATE SET
                        user_id = EXCLUDED.user_id, session_id = EXCLUDED.session_id, device_id = EXCLUDED.device_id,
                        bundle_id = EXCLUDED.bundle_id, environment = EXCLUDED.environment,
                        app_uid = EXCLUDED.app_uid, updated_at = now()
                    WHERE push_tokens.user_id = EXCLUDED.user_id
                       OR (EXCLUDED.device_id <> '' AND push_tokens.device_id = EXCLUDED.device_id)
                       OR NOT EXISTS (SELECT 1 FROM sessions s
                                      WHERE s.id = push_tokens.session_id AND s.ended_at IS NULL)
                    RETURNING device_id
                    """)
                guard let row = bound.first else { throw TokenHeld() }
                let device = try row.decode("device_id", as: String.self)
                if !device.isEmpty {
                    _ = try await connection.query(
                        """
                        DELETE FROM push_tokens
                        WHERE app_id = \(appId) AND session_id = \(sessionId) AND vendor = \(binding.vendor.rawValue)
                          AND device_id = \(device) AND token <> \(binding.token)
                        """)
                }
                return true
            }
        } catch is TokenHeld {
            return false
        }
    }

    /// Rolls the bind's transaction back when another user's live device holds the token.
    private struct TokenHeld: Error {}

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

    /// Removes every token of the user, on the caller's transaction (account deletion); returns how many went.
    func unbindAll(on connection: PostgresConnection, appId: Int64, userId: String) async throws -> Int {
        try await connection.query(
            """
            DELETE FROM push_tokens WHERE app_id = \(appId) AND user_id = \(userId) RETURNING vendor
            """
        ).count
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
