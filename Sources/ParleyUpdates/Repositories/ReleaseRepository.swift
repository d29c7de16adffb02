import Foundation
import ParleyHTTP
import ParleyPostgres

/// Releases in PostgreSQL (migrations/0007_releases.sql). Every query filters by the app, so one app's releases
/// are never reachable from another. Every change notifies `parley_release_changed` (payload: the app id) in
/// its transaction, so the update-check caches of all instances drop the app's list once it commits.
public struct ReleaseRepository: Sendable {
    public static let changeChannel = "parley_release_changed"

    let database: PostgresClient

    public init(database: PostgresClient) {
        self.database = database
    }

    static let columns = """
        id, app_id, platform, channel, version_code, version_name, release_notes, app_store_url, download_url,
        min_supported_version_code, rollout_percent, published_at, withdrawn_at, updated_at
        """

    static func decode(_ row: PostgresRow) throws -> Release {
        Release(
            id: try row.decode("id"), appId: try row.decode("app_id"), platform: try row.decode("platform"),
            channel: try row.decode("channel"), versionCode: try row.decode("version_code"),
            versionName: try row.decode("version_name"), releaseNotes: try row.decode("release_notes"),
            appStoreUrl: try row.decode("app_store_url"), downloadUrl: try row.decode("download_url"),
            minSupportedVersionCode: try row.decode("min_supported_version_code"),
            rolloutPercent: try row.decode("rollout_percent"), publishedAt: try row.decode("published_at"),
            withdrawnAt: try row.decode("withdrawn_at"), updatedAt: try row.decode("updated_at"))
    }

    /// Inserts `draft` unless a release of the same platform and channel (withdrawn or not) has a versionCode at
    /// or above it: 1401. Publishes of one platform and channel are serialized by an advisory lock, so two at once
    /// cannot both pass the check.
    public func publish(appId: Int64, _ draft: ReleaseDraft) async throws -> Release {
        do {
            return try await database.withTransaction { connection in
                let lockKey = "parley_release:\(appId):\(draft.platform):\(draft.channel)"
                _ = try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(lockKey), 0))")
                let highest = try await connection.query(
                    """
                    SELECT max(version_code) FROM releases
                    WHERE app_id = \(appId) AND platform = \(draft.platform) AND channel = \(draft.channel)
                    """)[0].decode(0, as: Int64?.self)
                if let highest, highest >= draft.versionCode {
                    throw Self.notIncreasing(highest: highest, draft: draft)
                }
                let rows = try await connection.query(
                    """
                    INSERT INTO releases (app_id, platform, channel, version_code, version_name, release_notes,
                                          app_store_url, download_url, min_supported_version_code, rollout_percent)
                    VALUES (\(appId), \(draft.platform), \(draft.channel), \(draft.versionCode), \(draft.versionName),
                            \(draft.releaseNotes), \(draft.appStoreUrl), \(draft.downloadUrl),
                            \(draft.minSupportedVersionCode), \(draft.rolloutPercent))
                    RETURNING \(unescaped: Self.columns)
                    """)
                _ = try await connection.query("SELECT pg_notify(\(Self.changeChannel), \(String(appId)))")
                return try Self.decode(rows[0])
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            // Only reachable if something bypassed the lock (e.g. a manual INSERT): same answer.
            throw APIError.versionCodeNotIncreasing
        }
    }

    static func notIncreasing(highest: Int64, draft: ReleaseDraft) -> APIError {
        let channel = draft.channel.isEmpty ? "the default channel" : "channel \(draft.channel)"
        return APIError.versionCodeNotIncreasing.with(
            message: "versionCode must be above \(highest), the highest published for \(draft.platform) on \(channel)")
    }

    public func find(appId: Int64, id: Int64) async throws -> Release? {
        try await database.query(
            "SELECT \(unescaped: Self.columns) FROM releases WHERE app_id = \(appId) AND id = \(id)"
        )
        .first.map(Self.decode)
    }

    /// Newest first (by platform, channel, then versionCode descending); at most `limit` (+1 to tell `hasMore`).
    public func list(
        appId: Int64, platform: String?, channel: String?, includeWithdrawn: Bool,
        limit: Int
    ) async throws -> [Release] {
        try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM releases
            WHERE app_id = \(appId) AND (\(platform)::text IS NULL OR platform = \(platform))
              AND (\(channel)::text IS NULL OR channel = \(channel))
              AND (\(includeWithdrawn) OR withdrawn_at IS NULL)
            ORDER BY platform, channel, version_code DESC
            LIMIT \(limit)
            """
        ).map(Self.decode)
    }

    /// Every release of the app that has not been withdrawn: what the update-check cache holds.
    public func offered(appId: Int64) async throws -> [Release] {
        try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM releases WHERE app_id = \(appId) AND withdrawn_at IS NULL
            """
        ).map(Self.decode)
    }

    /// Applies `changes` to the app's release `id`: 1400 when there is none, 1402 when it was withdrawn.
    public func update(appId: Int64, id: Int64, _ changes: ReleaseChanges) async throws -> Release {
        try await database.withTransaction { connection in
            let rows = try await connection.query(
                """
                SELECT \(unescaped: Self.columns) FROM releases WHERE app_id = \(appId) AND id = \(id) FOR UPDATE
                """)
            guard let row = rows.first else { throw APIError.releaseNotFound }
            let current = try Self.decode(row)
            guard !current.isWithdrawn else { throw APIError.releaseWithdrawn }
            let changed = try changes.applied(to: current)
            if changed == current { return current }
            let updated = try await connection.query(
                """
                UPDATE releases SET release_notes = \(changed.releaseNotes), app_store_url = \(changed.appStoreUrl),
                                    download_url = \(changed.downloadUrl),
                                    min_supported_version_code = \(changed.minSupportedVersionCode),
                                    rollout_percent = \(changed.rolloutPercent), updated_at = now()
                WHERE app_id = \(appId) AND id = \(id)
                RETURNING \(unescaped: Self.columns)
                """)
            _ = try await connection.query("SELECT pg_notify(\(Self.changeChannel), \(String(appId)))")
            return try Self.decode(updated[0])
        }
    }

    /// Withdraws the app's release `id` (idempotent: a withdrawn one is returned as it is); nil when there is none.
    public func withdraw(appId: Int64, id: Int64) async throws -> Release? {
        let rows = try await database.query(
            """
            WITH changed AS (
                UPDATE releases SET withdrawn_at = coalesce(withdrawn_at, now()),
                                    updated_at = CASE WHEN withdrawn_at IS NULL THEN now() ELSE updated_at END
                WHERE app_id = \(appId) AND id = \(id)
                RETURNING \(unescaped: Self.columns))
            SELECT changed.*, pg_notify(\(Self.changeChannel), changed.app_id::text)::text AS notified FROM changed
            """)
        return try rows.first.map(Self.decode)
    }
}
