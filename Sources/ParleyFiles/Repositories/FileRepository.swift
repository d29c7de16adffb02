import Foundation
import ParleyAuth
import ParleyPostgres

/// Files, blobs and the references that keep them: every query of the file service.
public struct FileRepository: Sendable {
    let database: PostgresClient

    public init(database: PostgresClient) { self.database = database }

    static let fileColumns = """
        f.object_key, f.app_id, f.owner_id, f.sha256, f.size, f.mime_type, f.ext, f.name, f.thumbnail_key, \
        f.created_at, b.storage_key, f.avatar_kind, f.avatar_holder
        """

    static func decode(_ row: PostgresRow) throws -> StoredFile {
        let avatarKind: String? = try row.decode("avatar_kind")
        let avatarHolder: String? = try row.decode("avatar_holder")
        return StoredFile(
            objectKey: try row.decode("object_key"), appId: try row.decode("app_id"),
            ownerId: try row.decode("owner_id"), sha256: try row.decode("sha256"), size: try row.decode("size"),
            mimeType: try row.decode("mime_type"), ext: try row.decode("ext"), name: try row.decode("name"),
            thumbnailKey: try row.decode("thumbnail_key"), storageKey: try row.decode("storage_key"),
            createdAt: try row.decode("created_at"),
            avatarHolder: avatarHolder.flatMap { id in
                switch avatarKind {
                case "user": .user(id)
                case "group": .group(id)
                default: nil
                }
            })
    }

    func find(objectKey: String) async throws -> StoredFile? {
        try await database.query(
            """
            SELECT \(unescaped: Self.fileColumns) FROM files f
            JOIN file_blobs b ON b.app_id = f.app_id AND b.sha256 = f.sha256
            WHERE f.object_key = \(objectKey)
            """
        ).first.map(Self.decode)
    }

    /// An upload's limits: the app's settings over the server's defaults, and the uploader's and the app's usage,
    /// in one query.
    func limits(appId: Int64, userId: String, defaults: FilesConfiguration) async throws -> FileLimits {
        let row = try await database.query(
            """
            SELECT s.max_file_bytes, array_to_string(s.allowed_types, ',') AS allowed_types,
                   s.user_quota_bytes, s.app_quota_bytes,
                   coalesce((SELECT bytes FROM file_user_usage WHERE app_id = \(appId) AND user_id = \(userId)), 0)
                       AS user_bytes,
                   coalesce((SELECT bytes FROM file_app_usage WHERE app_id = \(appId)), 0) AS app_bytes
            FROM (SELECT 1) AS one LEFT JOIN app_file_settings s ON s.app_id = \(appId)
            """)[0]
        let settings = try Self.decodeSettings(row)
        let userQuota = settings.userQuotaBytes ?? defaults.userQuotaBytes
        let appQuota = settings.appQuotaBytes ?? defaults.appQuotaBytes
        return FileLimits(
            maxFileBytes: min(settings.maxFileBytes ?? defaults.maxUploadBytes, defaults.maxUploadBytes),
            allowedTypes: settings.allowedTypes,
            quota: StorageQuota(
                userQuotaBytes: userQuota > 0 ? userQuota : nil, appQuotaBytes: appQuota > 0 ? appQuota : nil,
                userBytes: try row.decode("user_bytes"), appBytes: try row.decode("app_bytes")))
    }

    /// What `parley app files` sets; nil fields keep the stored value (`clearTypes` allows every type again).
    public struct SettingsUpdate: Sendable {
        public var maxFileBytes: Int64?
        public var allowedTypes: [String]?
        public var clearTypes = false
        /// 0: no quota for this app; `clearQuotas` returns both to the server's settings.
        public var userQuotaBytes: Int64?
        public var appQuotaBytes: Int64?
        public var clearQuotas = false

        public init() {}

        public var isEmpty: Bool {
            maxFileBytes == nil && allowedTypes == nil && !clearTypes && userQuotaBytes == nil && appQuotaBytes == nil
                && !clearQuotas
        }
    }

    public func updateSettings(appId: Int64, _ update: SettingsUpdate) async throws {
        _ = try await database.query(
            """
            INSERT INTO app_file_settings (app_id, max_file_bytes, allowed_types, user_quota_bytes, app_quota_bytes)
            VALUES (\(appId), \(update.maxFileBytes), \(update.allowedTypes.map { PostgresTextArray($0) })::text[],
                    \(update.userQuotaBytes), \(update.appQuotaBytes))
            ON CONFLICT (app_id) DO UPDATE SET
                max_file_bytes = coalesce(EXCLUDED.max_file_bytes, app_file_settings.max_file_bytes),
                allowed_types = CASE WHEN \(update.clearTypes) THEN NULL
                                     ELSE coalesce(EXCLUDED.allowed_types, app_file_settings.allowed_types) END,
                user_quota_bytes = CASE WHEN \(update.clearQuotas) THEN EXCLUDED.user_quota_bytes
                                        ELSE coalesce(EXCLUDED.user_quota_bytes, app_file_settings.user_quota_bytes) END,
                app_quota_bytes = CASE WHEN \(update.clearQuotas) THEN EXCLUDED.app_quota_bytes
                                       ELSE coalesce(EXCLUDED.app_quota_bytes, app_file_settings.app_quota_bytes) END,
                updated_at = now()
            """)
    }

    /// An app's own file settings (nil: the server's) and the bytes it stores.
    public struct AppSettings: Sendable, Equatable {
        public var maxFileBytes: Int64?
        public var allowedTypes: [String]?
        public var userQuotaBytes: Int64?
        public var appQuotaBytes: Int64?
        public var storedBytes: Int64 = 0
    }

    public func settings(appId: Int64) async throws -> AppSettings {
        let row = try await database.query(
            """
            SELECT s.max_file_bytes, array_to_string(s.allowed_types, ',') AS allowed_types,
                   s.user_quota_bytes, s.app_quota_bytes,
                   coalesce((SELECT bytes FROM file_app_usage WHERE app_id = \(appId)), 0) AS app_bytes
            FROM (SELECT 1) AS one LEFT JOIN app_file_settings s ON s.app_id = \(appId)
            """)[0]
        var settings = try Self.decodeSettings(row)
        settings.storedBytes = try row.decode("app_bytes")
        return settings
    }

    private static func decodeSettings(_ row: PostgresRow) throws -> AppSettings {
        // Types never contain a comma, so the array travels as one comma-joined text.
        let types: String? = try row.decode("allowed_types")
        return AppSettings(
            maxFileBytes: try row.decode("max_file_bytes"),
            allowedTypes: types.map { $0.split(separator: ",").map(String.init) },
            userQuotaBytes: try row.decode("user_quota_bytes"), appQuotaBytes: try row.decode("app_quota_bytes"))
    }

    /// The bytes a user's uploads hold and those the app stores (the quota counters, migrations/0016).
    public func usage(appId: Int64, userId: String) async throws -> (userBytes: Int64, appBytes: Int64) {
        let row = try await database.query(
            """
            SELECT coalesce((SELECT bytes FROM file_user_usage WHERE app_id = \(appId) AND user_id = \(userId)), 0)
                       AS user_bytes,
                   coalesce((SELECT bytes FROM file_app_usage WHERE app_id = \(appId)), 0) AS app_bytes
            """)[0]
        return (try row.decode("user_bytes"), try row.decode("app_bytes"))
    }

    /// Reuses the app's blob of this content when there is one: touches it under its row lock (so the sweeper
    /// keeps it) and returns its storage key.
    func reuseBlob(appId: Int64, sha256: String) async throws -> String? {
        try await database.query(
            """
            UPDATE file_blobs SET last_used_at = now() WHERE app_id = \(appId) AND sha256 = \(sha256)
            RETURNING storage_key
            """
        ).first.map { try $0.decode("storage_key") }
    }

    struct NewFile: Sendable {
        var objectKey: String
        var ownerId: String
        var mimeType: String
        var ext: String
        var name: String
        var thumbnailKey: String?
    }

    /// Records the blob (or finds the one a concurrent upload of the same content recorded first) and the file
    /// rows, in one transaction. Returns the blob's storage key: when it differs from `storageKey`, the caller's
    /// freshly stored object is surplus and goes to the garbage queue here. The usage counters the rows' triggers
    /// update are then checked against `quota`'s limits, under their row locks: past one, the transaction rolls
    /// back and `StorageQuotaExceeded` is thrown (the uploader's quota counts every upload; the app's only a
    /// content it did not store yet).
    func insert(
        appId: Int64, sha256: String, size: Int64, storageKey: String, files: [NewFile],
        quota: StorageQuota = .unlimited
    ) async throws -> String {
        try await database.withTransaction { connection in
            let blob = try await connection.query(
                """
                INSERT INTO file_blobs (app_id, sha256, size, storage_key) VALUES (\(appId), \(sha256), \(size), \(storageKey))
                ON CONFLICT (app_id, sha256) DO UPDATE SET last_used_at = now()
                RETURNING storage_key, (xmax = 0) AS inserted
                """)[0]
            let blobKey: String = try blob.decode("storage_key")
            let newContent: Bool = try blob.decode("inserted")
            if blobKey != storageKey {
                _ = try await connection.query(
                    """
                    INSERT INTO file_storage_garbage (storage_key) VALUES (\(storageKey)) ON CONFLICT DO NOTHING
                    """)
            }
            for file in files {
                _ = try await connection.query(
                    """
                    INSERT INTO files (object_key, app_id, owner_id, sha256, size, mime_type, ext, name, thumbnail_key)
                    VALUES (\(file.objectKey), \(appId), \(file.ownerId), \(sha256), \(size), \(file.mimeType),
                            \(file.ext), \(file.name), \(file.thumbnailKey))
                    """)
            }
            if quota.userQuotaBytes != nil || quota.appQuotaBytes != nil, let owner = files.first?.ownerId {
                let row = try await connection.query(
                    """
                    SELECT coalesce((SELECT bytes FROM file_user_usage WHERE app_id = \(appId) AND user_id = \(owner)), 0)
                               AS user_bytes,
                           coalesce((SELECT bytes FROM file_app_usage WHERE app_id = \(appId)), 0) AS app_bytes
                    """)[0]
                // The counters already include this upload: check them as they are.
                var now = quota
                now.userBytes = try row.decode("user_bytes")
                now.appBytes = try row.decode("app_bytes")
                if let kind = now.exceeded(adding: 0, newContent: newContent) { throw StorageQuotaExceeded(kind: kind) }
            }
            return blobKey
        }
    }

    /// Of `objectKeys`, those the user may read (and so reference in a message or get a URL for): files of the
    /// user's app that the user uploaded, that are the avatar record a user's or a group's profile names (see
    /// `AvatarService`), or that a message references in a conversation the user is a member of; a thumbnail goes
    /// with its file. Other apps' keys are never returned.
    func readable(appId: Int64, userId: String, objectKeys: [String]) async throws -> Set<String> {
        let rows = try await database.query(
            """
            WITH wanted AS (
                SELECT f.object_key, f.owner_id, coalesce(p.object_key, f.object_key) AS subject_key
                FROM files f
                LEFT JOIN files p ON p.thumbnail_key = f.object_key AND p.app_id = f.app_id
                WHERE f.app_id = \(appId) AND f.object_key = ANY(\(PostgresTextArray(objectKeys))::text[])
            )
            SELECT w.object_key FROM wanted w
            WHERE w.owner_id = \(userId)
               OR EXISTS (SELECT 1 FROM files o WHERE o.object_key = w.subject_key AND o.owner_id = \(userId))
               OR EXISTS (
                    SELECT 1 FROM files a
                    WHERE a.object_key IN (w.object_key, w.subject_key) AND a.avatar_kind IS NOT NULL
                      AND (EXISTS (SELECT 1 FROM users u WHERE a.avatar_kind = 'user' AND u.app_id = \(appId)
                                     AND u.id = a.avatar_holder AND u.avatar = a.object_key)
                           OR EXISTS (SELECT 1 FROM groups g WHERE a.avatar_kind = 'group' AND g.app_id = \(appId)
                                        AND g.id = a.avatar_holder AND g.avatar_key = a.object_key)))
               OR EXISTS (
                    SELECT 1 FROM messages m
                    JOIN conversation_members cm ON cm.app_id = m.app_id AND cm.conversation_id = m.conversation_id
                                                AND cm.user_id = \(userId)
                    WHERE m.object_keys && ARRAY[w.object_key, w.subject_key] AND m.object_keys IS NOT NULL
                      AND m.app_id = \(appId))
            """)
        return Set(try rows.map { try $0.decode("object_key", as: String.self) })
    }

    /// Copies `objectKey`'s reference (same blob, name, type and thumbnail) under `newKey` as `holder`'s avatar
    /// record, owned by the user who set it; nil when the file is gone.
    func insertAvatarRecord(copying objectKey: String, newKey: String, ownerId: String, holder: AvatarHolder)
        async throws -> String?
    {
        try await database.query(
            """
            INSERT INTO files (object_key, app_id, owner_id, sha256, size, mime_type, ext, name, thumbnail_key,
                               avatar_kind, avatar_holder)
            SELECT \(newKey), app_id, \(ownerId), sha256, size, mime_type, ext, name, thumbnail_key,
                   \(holder.kind), \(holder.id)
            FROM files WHERE object_key = \(objectKey)
            RETURNING object_key
            """
        ).first.map { try $0.decode("object_key") }
    }

    // MARK: Sweeping

    /// Deletes up to `limit` files older than the grace period that nothing references (no message, no avatar,
    /// no parent file that is itself kept); returns how many.
    func sweepFiles(graceSeconds: Int, limit: Int = 1000) async throws -> Int {
        try await database.query(
            """
            WITH doomed AS (
                SELECT f.object_key FROM files f
                WHERE f.created_at < now() - make_interval(secs => \(graceSeconds))
                  AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.object_keys @> ARRAY[f.object_key] AND m.object_keys IS NOT NULL)
                  AND NOT EXISTS (SELECT 1 FROM users u WHERE u.avatar = f.object_key)
                  AND NOT EXISTS (SELECT 1 FROM groups g WHERE g.avatar_key = f.object_key)
                  AND NOT EXISTS (
                      SELECT 1 FROM files p WHERE p.thumbnail_key = f.object_key
                        AND (p.created_at >= now() - make_interval(secs => \(graceSeconds))
                             OR EXISTS (SELECT 1 FROM messages m WHERE m.object_keys @> ARRAY[p.object_key] AND m.object_keys IS NOT NULL)
                             OR EXISTS (SELECT 1 FROM users u WHERE u.avatar = p.object_key)
                             OR EXISTS (SELECT 1 FROM groups g WHERE g.avatar_key = p.object_key)))
                LIMIT \(limit)
                FOR UPDATE OF f SKIP LOCKED
            )
            DELETE FROM files WHERE object_key IN (SELECT object_key FROM doomed)
            RETURNING object_key
            """
        ).count
    }

    /// Deletes blob rows no file uses that no upload touched within the grace period, queueing their storage
    /// objects for deletion in the same transaction.
    func sweepBlobs(graceSeconds: Int, limit: Int = 1000) async throws -> Int {
        try await database.query(
            """
            WITH doomed AS (
                DELETE FROM file_blobs b
                WHERE (b.app_id, b.sha256) IN (
                    SELECT b2.app_id, b2.sha256 FROM file_blobs b2
                    WHERE b2.last_used_at < now() - make_interval(secs => \(graceSeconds))
                      AND NOT EXISTS (SELECT 1 FROM files f WHERE f.app_id = b2.app_id AND f.sha256 = b2.sha256)
                    LIMIT \(limit))
                  AND b.last_used_at < now() - make_interval(secs => \(graceSeconds))
                  AND NOT EXISTS (SELECT 1 FROM files f WHERE f.app_id = b.app_id AND f.sha256 = b.sha256)
                RETURNING b.storage_key
            )
            INSERT INTO file_storage_garbage (storage_key) SELECT storage_key FROM doomed ON CONFLICT DO NOTHING
            RETURNING storage_key
            """
        ).count
    }

    /// Queues a storage object no row will reference (an upload refused after it was stored).
    func queueGarbage(_ storageKey: String) async throws {
        _ = try await database.query(
            """
            INSERT INTO file_storage_garbage (storage_key) VALUES (\(storageKey)) ON CONFLICT DO NOTHING
            """)
    }

    func garbage(limit: Int = 500) async throws -> [String] {
        try await database.query(
            """
            SELECT storage_key FROM file_storage_garbage ORDER BY queued_at LIMIT \(limit)
            """
        ).map { try $0.decode("storage_key") }
    }

    func garbageCollected(_ storageKeys: [String]) async throws {
        _ = try await database.query(
            """
            DELETE FROM file_storage_garbage WHERE storage_key = ANY(\(PostgresTextArray(storageKeys))::text[])
            """)
    }

    func garbageFailed(_ storageKey: String) async throws {
        _ = try await database.query(
            """
            UPDATE file_storage_garbage SET attempts = attempts + 1 WHERE storage_key = \(storageKey)
            """)
    }
}
