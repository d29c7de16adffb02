import ParleyAuth
import ParleyPostgres

/// `app_push_vendor_settings` (FCM and HMS): written by `parley app push`, read by the worker.
public struct PushVendorSettingsRepository: Sendable {
    let database: PostgresClient

    public init(database: PostgresClient) { self.database = database }

    static let columns = """
        app_id, fcm_project_id, fcm_service_account_ciphertext, fcm_endpoint, fcm_token_uri, hms_app_id,
        hms_client_secret_ciphertext, hms_endpoint, hms_oauth_endpoint
        """

    static func decode(_ row: PostgresRow) throws -> PushVendorSettings {
        var settings = PushVendorSettings(appId: try row.decode("app_id"))
        settings.fcmProjectId = try row.decode("fcm_project_id")
        settings.sealedFCMServiceAccount = try row.decode("fcm_service_account_ciphertext")
        settings.fcmEndpoint = try row.decode("fcm_endpoint")
        settings.fcmTokenURI = try row.decode("fcm_token_uri")
        settings.hmsAppId = try row.decode("hms_app_id")
        settings.sealedHMSClientSecret = try row.decode("hms_client_secret_ciphertext")
        settings.hmsEndpoint = try row.decode("hms_endpoint")
        settings.hmsOAuthEndpoint = try row.decode("hms_oauth_endpoint")
        return settings
    }

    public func settings(appId: Int64) async throws -> PushVendorSettings? {
        try await database.query(
            "SELECT \(unescaped: Self.columns) FROM app_push_vendor_settings WHERE app_id = \(appId)"
        ).first.map(Self.decode)
    }

    /// Settings of several apps at once (one worker batch).
    func settings(appIds: [Int64]) async throws -> [Int64: PushVendorSettings] {
        guard !appIds.isEmpty else { return [:] }
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM app_push_vendor_settings
            WHERE app_id = ANY(\(PostgresTextArray(appIds.map(String.init)))::bigint[])
            """)
        var result: [Int64: PushVendorSettings] = [:]
        for row in rows {
            let settings = try Self.decode(row)
            result[settings.appId] = settings
        }
        return result
    }

    /// Changes of `parley app push`: nil keeps the current value; a `remove…` flag clears a vendor (credentials and
    /// endpoints) or one endpoint override (back to the vendor's own), and wins over a value given with it.
    public struct Update: Sendable {
        public var fcmProjectId: String?
        public var sealedFCMServiceAccount: [UInt8]?
        public var fcmEndpoint: String?
        public var fcmTokenURI: String?
        public var removeFCM = false
        public var clearFCMEndpoint = false
        public var clearFCMTokenURI = false
        public var hmsAppId: String?
        public var sealedHMSClientSecret: [UInt8]?
        public var hmsEndpoint: String?
        public var hmsOAuthEndpoint: String?
        public var removeHMS = false
        public var clearHMSEndpoint = false
        public var clearHMSOAuthEndpoint = false

        public init() {}

        public var changesAnything: Bool {
            fcmProjectId != nil || sealedFCMServiceAccount != nil || fcmEndpoint != nil || fcmTokenURI != nil
                || removeFCM || clearFCMEndpoint || clearFCMTokenURI || hmsAppId != nil
                || sealedHMSClientSecret != nil || hmsEndpoint != nil || hmsOAuthEndpoint != nil || removeHMS
                || clearHMSEndpoint || clearHMSOAuthEndpoint
        }
    }

    /// One statement: a vendor's id and secret change together or not at all (the table's checks refuse one
    /// without the other).
    public func update(appId: Int64, _ update: Update) async throws {
        let clearFCMEndpoint = update.removeFCM || update.clearFCMEndpoint
        let clearFCMTokenURI = update.removeFCM || update.clearFCMTokenURI
        let clearHMSEndpoint = update.removeHMS || update.clearHMSEndpoint
        let clearHMSOAuthEndpoint = update.removeHMS || update.clearHMSOAuthEndpoint
        _ = try await database.query(
            """
            INSERT INTO app_push_vendor_settings AS s (app_id, fcm_project_id, fcm_service_account_ciphertext,
                fcm_endpoint, fcm_token_uri, hms_app_id, hms_client_secret_ciphertext, hms_endpoint, hms_oauth_endpoint)
            VALUES (\(appId), \(update.removeFCM ? nil : update.fcmProjectId),
                    \(update.removeFCM ? nil : update.sealedFCMServiceAccount),
                    \(clearFCMEndpoint ? nil : update.fcmEndpoint), \(clearFCMTokenURI ? nil : update.fcmTokenURI),
                    \(update.removeHMS ? nil : update.hmsAppId), \(update.removeHMS ? nil : update.sealedHMSClientSecret),
                    \(clearHMSEndpoint ? nil : update.hmsEndpoint),
                    \(clearHMSOAuthEndpoint ? nil : update.hmsOAuthEndpoint))
            ON CONFLICT (app_id) DO UPDATE SET
                fcm_project_id = CASE WHEN \(update.removeFCM) THEN NULL
                                      ELSE coalesce(EXCLUDED.fcm_project_id, s.fcm_project_id) END,
                fcm_service_account_ciphertext = CASE WHEN \(update.removeFCM) THEN NULL
                    ELSE coalesce(EXCLUDED.fcm_service_account_ciphertext, s.fcm_service_account_ciphertext) END,
                fcm_endpoint = CASE WHEN \(clearFCMEndpoint) THEN NULL
                                    ELSE coalesce(EXCLUDED.fcm_endpoint, s.fcm_endpoint) END,
                fcm_token_uri = CASE WHEN \(clearFCMTokenURI) THEN NULL
                                     ELSE coalesce(EXCLUDED.fcm_token_uri, s.fcm_token_uri) END,
                hms_app_id = CASE WHEN \(update.removeHMS) THEN NULL ELSE coalesce(EXCLUDED.hms_app_id, s.hms_app_id) END,
                hms_client_secret_ciphertext = CASE WHEN \(update.removeHMS) THEN NULL
                    ELSE coalesce(EXCLUDED.hms_client_secret_ciphertext, s.hms_client_secret_ciphertext) END,
                hms_endpoint = CASE WHEN \(clearHMSEndpoint) THEN NULL
                                    ELSE coalesce(EXCLUDED.hms_endpoint, s.hms_endpoint) END,
                hms_oauth_endpoint = CASE WHEN \(clearHMSOAuthEndpoint) THEN NULL
                                          ELSE coalesce(EXCLUDED.hms_oauth_endpoint, s.hms_oauth_endpoint) END,
                updated_at = now()
            """)
    }

    /// Reseals every FCM service account and HMS secret the previous master key sealed under the current one, in
    /// one transaction; throws `UnreadableSecrets` (changing nothing) when one opens under neither.
    public func resealSecrets(with box: PushKeyBox) async throws -> ResealReport {
        try await database.withTransaction { connection in
            var report = ResealReport()
            var unreadable: [String] = []
            let rows = try await connection.query(
                """
                SELECT app_id, fcm_service_account_ciphertext, hms_client_secret_ciphertext
                FROM app_push_vendor_settings
                WHERE fcm_service_account_ciphertext IS NOT NULL OR hms_client_secret_ciphertext IS NOT NULL
                ORDER BY app_id FOR UPDATE
                """)
            for row in rows {
                let appId: Int64 = try row.decode("app_id")
                var fcm: [UInt8]?
                var hms: [UInt8]?
                if let sealed: [UInt8] = try row.decode("fcm_service_account_ciphertext") {
                    switch box.resealFCMServiceAccount(sealed, appId: appId) {
                    case .current: report.alreadyCurrent += 1
                    case .unreadable: unreadable.append("app \(appId) (FCM)")
                    case .resealed(let fresh): (report.resealed, fcm) = (report.resealed + 1, fresh)
                    }
                }
                if let sealed: [UInt8] = try row.decode("hms_client_secret_ciphertext") {
                    switch box.resealHMSClientSecret(sealed, appId: appId) {
                    case .current: report.alreadyCurrent += 1
                    case .unreadable: unreadable.append("app \(appId) (HMS)")
                    case .resealed(let fresh): (report.resealed, hms) = (report.resealed + 1, fresh)
                    }
                }
                guard unreadable.isEmpty, fcm != nil || hms != nil else { continue }
                _ = try await connection.query(
                    """
                    UPDATE app_push_vendor_settings SET
                        fcm_service_account_ciphertext = coalesce(\(fcm), fcm_service_account_ciphertext),
                        hms_client_secret_ciphertext = coalesce(\(hms), hms_client_secret_ciphertext),
                        updated_at = now()
                    WHERE app_id = \(appId)
                    """)
            }
            if !unreadable.isEmpty {
                throw UnreadableSecrets(what: "the FCM and HMS secrets", owners: unreadable)
            }
            return report
        }
    }
}
