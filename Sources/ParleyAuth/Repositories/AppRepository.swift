import Foundation
import ParleyCrypto
import ParleyPostgres

/// Apps (tenants) in PostgreSQL. Every change notifies `parley_app_changed` (payload: the app id) in the same
/// statement, so running servers pick it up at once.
public struct AppRepository: Sendable {
    public static let changeChannel = "parley_app_changed"

    let database: PostgresClient

    public init(database: PostgresClient) {
        self.database = database
    }

    static let columns = """
        id, app_key, name, secret_ciphertext, previous_secret_ciphertext, previous_secret_expires_at, privacy_version,
        session_policy, access_token_ttl_seconds, refresh_token_ttl_seconds, im_token_ttl_seconds, revoke_window_seconds,
        direct_messages, created_at, updated_at
        """

    static func decode(_ row: PostgresRow) throws -> AppSettings {
        let policyName = try row.decode("session_policy", as: String.self)
        return AppSettings(
            id: try row.decode("id"), appKey: try row.decode("app_key"), name: try row.decode("name"),
            privacyVersion: try row.decode("privacy_version"),
            sessionPolicy: SessionPolicy(rawValue: policyName) ?? .onePerPlatform,
            accessTokenTTL: try row.decode("access_token_ttl_seconds"),
            refreshTokenTTL: try row.decode("refresh_token_ttl_seconds"),
            imTokenTTL: try row.decode("im_token_ttl_seconds"),
            revokeWindowSeconds: try row.decode("revoke_window_seconds"),
            directMessages: DirectMessagePolicy(rawValue: try row.decode("direct_messages")) ?? .anyone,
            secretCiphertext: try row.decode("secret_ciphertext"),
            previousSecretCiphertext: try row.decode("previous_secret_ciphertext"),
            previousSecretExpiresAt: try row.decode("previous_secret_expires_at"),
            createdAt: try row.decode("created_at"), updatedAt: try row.decode("updated_at"))
    }

    /// Creates an app; returns it with its secret, which is shown once and never stored in plain text.
    public func create(
        name: String, privacyVersion: Int = 0, sessionPolicy: SessionPolicy = .onePerPlatform,
        secrets: AppSecretBox
    ) async throws -> (app: AppSettings, secret: String) {
        let key = Identifiers.newAppKey()
        let secret = Identifiers.newAppSecret()
        let sealed = try secrets.seal(secret: secret, appKey: key)
        let rows = try await database.query(
            """
            WITH created AS (
                INSERT INTO apps (app_key, name, secret_ciphertext, privacy_version, session_policy)
                VALUES (\(key), \(name), \(sealed), \(privacyVersion), \(sessionPolicy.rawValue))
                RETURNING \(unescaped: Self.columns))
            SELECT created.*, pg_notify(\(Self.changeChannel), created.id::text)::text AS notified FROM created
            """)
        return (try Self.decode(rows[0]), secret)
    }

    public func list() async throws -> [AppSettings] {
        try await database.query("SELECT \(unescaped: Self.columns) FROM apps ORDER BY id").map(Self.decode)
    }

    public func find(key: String) async throws -> AppSettings? {
        try await database.query("SELECT \(unescaped: Self.columns) FROM apps WHERE app_key = \(key)")
            .first.map(Self.decode)
    }

    public func find(id: Int64) async throws -> AppSettings? {
        try await database.query("SELECT \(unescaped: Self.columns) FROM apps WHERE id = \(id)").first.map(Self.decode)
    }

    /// Apps changed at or after `since` (the poll's lookback window).
    func changed(since: Date) async throws -> [AppSettings] {
        try await database.query("SELECT \(unescaped: Self.columns) FROM apps WHERE updated_at >= \(since)")
            .map(Self.decode)
    }

    /// A new secret; the previous one keeps verifying for `graceSeconds` (0: refused at once).
    public func rotateSecret(appKey: String, graceSeconds: Int, secrets: AppSecretBox) async throws
        -> (app: AppSettings, secret: String)?
    {
        let secret = Identifiers.newAppSecret()
        let sealed = try secrets.seal(secret: secret, appKey: appKey)
        let rows = try await database.query(
            """
            WITH changed AS (
                UPDATE apps SET previous_secret_ciphertext = CASE WHEN \(graceSeconds) > 0 THEN secret_ciphertext END,
                                previous_secret_expires_at = CASE WHEN \(graceSeconds) > 0
                                    THEN now() + make_interval(secs => \(graceSeconds)) END,
                                secret_ciphertext = \(sealed), updated_at = now()
                WHERE app_key = \(appKey)
                RETURNING \(unescaped: Self.columns))
            SELECT changed.*, pg_notify(\(Self.changeChannel), changed.id::text)::text AS notified FROM changed
            """)
        guard let row = rows.first else { return nil }
        return (try Self.decode(row), secret)
    }

    /// Reseals every app's secret (and previous secret) that the previous master key sealed under the current one,
    /// in one transaction with the rows locked; throws `UnreadableSecrets` (changing nothing) when a value opens
    /// under neither key. Running servers reload the changed apps (NOTIFY).
    public func resealSecrets(with secrets: AppSecretBox) async throws -> ResealReport {
        try await database.withTransaction { connection in
            var report = ResealReport()
            var unreadable: [String] = []
            let rows = try await connection.query(
                """
                SELECT id, app_key, secret_ciphertext, previous_secret_ciphertext FROM apps ORDER BY id FOR UPDATE
                """)
            for row in rows {
                let id: Int64 = try row.decode("id")
                let appKey: String = try row.decode("app_key")
                var changed = false
                var sealed: [[UInt8]?] = [
                    try row.decode("secret_ciphertext"), try row.decode("previous_secret_ciphertext"),
                ]
                for index in sealed.indices {
                    guard let value = sealed[index] else { continue }
                    switch secrets.reseal(value, appKey: appKey) {
                    case .current: report.alreadyCurrent += 1
                    case .resealed(let fresh):
                        sealed[index] = fresh
                        changed = true
                        report.resealed += 1
                    case .unreadable: unreadable.append(appKey)
                    }
                }
                guard changed, unreadable.isEmpty else { continue }
                _ = try await connection.query(
                    """
                    UPDATE apps SET secret_ciphertext = \(sealed[0]!), previous_secret_ciphertext = \(sealed[1]),
                                    updated_at = now()
                    WHERE id = \(id)
                    RETURNING pg_notify(\(Self.changeChannel), id::text)::text
                    """)
            }
            if !unreadable.isEmpty { throw UnreadableSecrets(what: "the app secrets", owners: unreadable) }
            return report
        }
    }

    /// Changes settings; nil arguments keep the current value. `clearTTLs` resets the lifetimes to the defaults.
    public func update(
        appKey: String, name: String? = nil, privacyVersion: Int? = nil,
        sessionPolicy: SessionPolicy? = nil, lifetimes: TokenLifetimeOverrides? = nil,
        revokeWindowSeconds: Int? = nil, directMessages: DirectMessagePolicy? = nil
    ) async throws
        -> AppSettings?
    {
        let rows = try await database.query(
            """
            WITH changed AS (
                UPDATE apps SET name = coalesce(\(name), name),
                                privacy_version = coalesce(\(privacyVersion), privacy_version),
                                session_policy = coalesce(\(sessionPolicy?.rawValue), session_policy),
                                access_token_ttl_seconds = CASE WHEN \(lifetimes != nil)
                                    THEN \(lifetimes?.access)::integer ELSE access_token_ttl_seconds END,
                                refresh_token_ttl_seconds = CASE WHEN \(lifetimes != nil)
                                    THEN \(lifetimes?.refresh)::integer ELSE refresh_token_ttl_seconds END,
                                im_token_ttl_seconds = CASE WHEN \(lifetimes != nil)
                                    THEN \(lifetimes?.im)::integer ELSE im_token_ttl_seconds END,
                                revoke_window_seconds = coalesce(\(revokeWindowSeconds)::integer, revoke_window_seconds),
                                direct_messages = coalesce(\(directMessages?.rawValue), direct_messages),
                                updated_at = now()
                WHERE app_key = \(appKey)
                RETURNING \(unescaped: Self.columns))
            SELECT changed.*, pg_notify(\(Self.changeChannel), changed.id::text)::text AS notified FROM changed
            """)
        return try rows.first.map(Self.decode)
    }
}
