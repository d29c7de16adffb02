import ParleyPostgres

/// `app_webhooks`: written by `parley app webhook`, read into `WebhookSettingsCache`. Every change notifies
/// `parley_webhook_changed` (payload: the app id) through the table's trigger (migrations/0022).
public struct WebhookSettingsRepository: Sendable {
    public static let changeChannel = "parley_webhook_changed"
    let database: PostgresClient

    public init(database: PostgresClient) { self.database = database }

    static let columns =
        "app_id, url, array_to_string(events, ',') AS events, timeout_ms, on_failure, batch_size, enabled"

    static func decode(_ row: PostgresRow) throws -> WebhookSettings {
        let names = try row.decode("events", as: String.self).split(separator: ",").map(String.init)
        return WebhookSettings(
            appId: try row.decode("app_id"), url: try row.decode("url"),
            events: names.compactMap(WebhookEvent.init(rawValue:)),
            timeoutMilliseconds: try row.decode("timeout_ms"),
            onFailure: WebhookSettings.FailurePolicy(rawValue: try row.decode("on_failure")) ?? .allow,
            batchSize: try row.decode("batch_size"), enabled: try row.decode("enabled"))
    }

    public func settings(appId: Int64) async throws -> WebhookSettings? {
        try await database.query(
            "SELECT \(unescaped: Self.columns) FROM app_webhooks WHERE app_id = \(appId)"
        ).first.map(Self.decode)
    }

    func all() async throws -> [WebhookSettings] {
        try await database.query("SELECT \(unescaped: Self.columns) FROM app_webhooks").map(Self.decode)
    }

    /// Stores the app's settings whole (the CLI merges with the stored ones first).
    public func save(_ settings: WebhookSettings) async throws {
        _ = try await database.query(
            """
            INSERT INTO app_webhooks (app_id, url, events, timeout_ms, on_failure, batch_size, enabled)
            VALUES (\(settings.appId), \(settings.url), \(PostgresTextArray(settings.events.map(\.rawValue)))::text[],
                    \(settings.timeoutMilliseconds), \(settings.onFailure.rawValue), \(settings.batchSize),
                    \(settings.enabled))
            ON CONFLICT (app_id) DO UPDATE SET
                url = EXCLUDED.url, events = EXCLUDED.events, timeout_ms = EXCLUDED.timeout_ms,
                on_failure = EXCLUDED.on_failure, batch_size = EXCLUDED.batch_size, enabled = EXCLUDED.enabled,
                updated_at = now()
            """)
    }

    /// Removes the app's webhook; its queued events are dropped by the worker. False when it had none.
    public func remove(appId: Int64) async throws -> Bool {
        !(try await database.query("DELETE FROM app_webhooks WHERE app_id = \(appId) RETURNING app_id")).isEmpty
    }
}
