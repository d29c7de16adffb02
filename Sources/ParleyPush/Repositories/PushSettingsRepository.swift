import ParleyAuth
import ParleyPostgres

/// `app_push_settings`: written by `parley app push`, read by the worker.
public struct PushSettingsRepository: Sendable {
    let database: PostgresClient

    public init(database: PostgresClient) { self.database = database }

    static func decode(_ row: PostgresRow) throws -> PushSettings {
        var settings = PushSettings(
            appId: try row.decode("app_id"), enabled: try row.decode("enabled"),
            teamId: try row.decode("apns_team_id"), keyId: try row.decode("apns_key_id"),
            sealedKey: try row.decode("apns_private_key_ciphertext"),
            bundleId: try row.decode("apns_bundle_id"),
            preview: PushPreview(rawValue: try row.decode("preview")) ?? .full,
            endpoint: try row.decode("apns_endpoint"))
        for environment in PushEnvironment.allCases {
            if let sealed = try row.decode(certificateColumn(environment), as: [UInt8]?.self) {
                settings.sealedCertificates[environment] = sealed
            }
        }
        return settings
    }

    static let columns = """
        app_id, enabled, apns_team_id, apns_key_id, apns_private_key_ciphertext, apns_bundle_id, preview, apns_endpoint,
        apns_certificate_sandbox_ciphertext, apns_certificate_production_ciphertext
        """

    /// The column of an environment's sealed APNs certificate (migration 0028).
    static func certificateColumn(_ environment: PushEnvironment) -> String {
        "apns_certificate_\(environment.rawValue)_ciphertext"
    }

    /// Reseals every APNs key the previous master key sealed under the current one, in one transaction; throws
    /// `UnreadableSecrets` (changing nothing) when a key opens under neither.
    public func resealKeys(with box: PushKeyBox) async throws -> ResealReport {
        try await database.withTransaction { connection in
            var report = ResealReport()
            var unreadable: [String] = []
            let rows = try await connection.query(
                """
                SELECT app_id, apns_private_key_ciphertext FROM app_push_settings
                WHERE apns_private_key_ciphertext IS NOT NULL ORDER BY app_id FOR UPDATE
                """)
            for row in rows {
                let appId: Int64 = try row.decode("app_id")
                switch box.reseal(try row.decode("apns_private_key_ciphertext"), appId: appId) {
                case .current: report.alreadyCurrent += 1
                case .unreadable: unreadable.append("app \(appId)")
                case .resealed(let fresh):
                    report.resealed += 1
                    guard unreadable.isEmpty else { continue }
                    _ = try await connection.query(
                        """
                        UPDATE app_push_settings SET apns_private_key_ciphertext = \(fresh), updated_at = now()
                        WHERE app_id = \(appId)
                        """)
                }
            }
            try await resealCertificates(with: box, on: connection, report: &report, unreadable: &unreadable)
            if !unreadable.isEmpty { throw UnreadableSecrets(what: "the APNs keys", owners: unreadable) }
            return report
        }
    }

    /// The APNs certificates' part of `resealKeys(with:)`, in its transaction.
    private func resealCertificates(
        with box: PushKeyBox, on connection: PostgresConnection, report: inout ResealReport,
        unreadable: inout [String]
    ) async throws {
        for environment in PushEnvironment.allCases {
            let column = Self.certificateColumn(environment)
            let rows = try await connection.query(
                """
                SELECT app_id, \(unescaped: column) AS sealed FROM app_push_settings
                WHERE \(unescaped: column) IS NOT NULL ORDER BY app_id FOR UPDATE
                """)
            for row in rows {
                let appId: Int64 = try row.decode("app_id")
                switch box.resealCertificate(try row.decode("sealed"), appId: appId, environment: environment) {
                case .current: report.alreadyCurrent += 1
                case .unreadable: unreadable.append("app \(appId) (\(environment.rawValue) certificate)")
                case .resealed(let fresh):
                    report.resealed += 1
                    guard unreadable.isEmpty else { continue }
                    _ = try await connection.query(
                        """
                        UPDATE app_push_settings SET \(unescaped: column) = \(fresh), updated_at = now()
                        WHERE app_id = \(appId)
                        """)
                }
            }
        }
    }

    public func settings(appId: Int64) async throws -> PushSettings? {
        try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM app_push_settings WHERE app_id = \(appId)
            """
        ).first.map(Self.decode)
    }

    /// Settings of several apps at once (one worker batch).
    func settings(appIds: [Int64]) async throws -> [Int64: PushSettings] {
        guard !appIds.isEmpty else { return [:] }
        let rows = try await database.query(
            """
            SELECT \(unescaped: Self.columns) FROM app_push_settings
            WHERE app_id = ANY(\(PostgresTextArray(appIds.map(String.init)))::bigint[])
            """)
        var result: [Int64: PushSettings] = [:]
        for row in rows {
            let settings = try Self.decode(row)
            result[settings.appId] = settings
        }
        return result
    }

    /// Apps with push enabled (the worker wakes early only for their messages).
    func enabledAppIds() async throws -> Set<Int64> {
        Set(
            try await database.query("SELECT app_id FROM app_push_settings WHERE enabled").map {
                try $0.decode("app_id", as: Int64.self)
            })
    }

    /// Changes of `parley app push`: nil keeps the current value; `clearEndpoint` goes back to Apple's.
    public struct Update: Sendable {
        public var enabled: Bool?
        public var teamId: String?
        public var keyId: String?
        public var sealedKey: [UInt8]?
        public var bundleId: String?
        public var preview: PushPreview?
        public var endpoint: String?
        public var clearEndpoint = false
        /// Sealed APNs certificates to store (`PushKeyBox.seal(certificatePEM:appId:environment:)`); others are kept.
        public var sealedCertificates: [PushEnvironment: [UInt8]] = [:]

        public init() {}
    }

    public func update(appId: Int64, _ update: Update) async throws {
        _ = try await database.query(
            """
            INSERT INTO app_push_settings (app_id, enabled, apns_team_id, apns_key_id, apns_private_key_ciphertext,
                                           apns_bundle_id, preview, apns_endpoint,
                                           apns_certificate_sandbox_ciphertext, apns_certificate_production_ciphertext)
            VALUES (\(appId), coalesce(\(update.enabled), false), \(update.teamId), \(update.keyId), \(update.sealedKey),
                    \(update.bundleId), coalesce(\(update.preview?.rawValue), 'full'), \(update.endpoint),
                    \(update.sealedCertificates[.sandbox]), \(update.sealedCertificates[.production]))
            ON CONFLICT (app_id) DO UPDATE SET
                enabled = coalesce(\(update.enabled), app_push_settings.enabled),
                apns_team_id = coalesce(EXCLUDED.apns_team_id, app_push_settings.apns_team_id),
                apns_key_id = coalesce(EXCLUDED.apns_key_id, app_push_settings.apns_key_id),
                apns_private_key_ciphertext = coalesce(EXCLUDED.apns_private_key_ciphertext,
                                                       app_push_settings.apns_private_key_ciphertext),
                apns_bundle_id = coalesce(EXCLUDED.apns_bundle_id, app_push_settings.apns_bundle_id),
                preview = coalesce(\(update.preview?.rawValue), app_push_settings.preview),
                apns_endpoint = CASE WHEN \(update.clearEndpoint) THEN NULL
                                     ELSE coalesce(EXCLUDED.apns_endpoint, app_push_settings.apns_endpoint) END,
                apns_certificate_sandbox_ciphertext = coalesce(EXCLUDED.apns_certificate_sandbox_ciphertext,
                                                               app_push_settings.apns_certificate_sandbox_ciphertext),
                apns_certificate_production_ciphertext = coalesce(
                    EXCLUDED.apns_certificate_production_ciphertext,
                    app_push_settings.apns_certificate_production_ciphertext),
                updated_at = now()
            """)
    }
}
