import ParleyObservability
import ParleyPostgres

/// `push_attempts`: what every vendor answered, the last `PushAttempt.keptPerUser` per user (the table's trigger
/// trims in the inserting statement).
public struct PushAttemptRepository: Sendable {
    let database: PostgresClient

    public init(database: PostgresClient) { self.database = database }

    /// Records attempts in one statement. Every sender (APNs, FCM, HMS) reports through the worker to here.
    public func record(_ attempts: [PushAttempt]) async throws {
        guard !attempts.isEmpty else { return }
        _ = try await database.query(
            """
            INSERT INTO push_attempts (app_id, user_id, message_id, vendor, token_suffix, kind, status, reason,
                                       vendor_id, outcome)
            SELECT * FROM unnest(
                \(PostgresTextArray(attempts.map { String($0.appId) }))::bigint[],
                \(PostgresTextArray(attempts.map(\.userId)))::text[],
                \(PostgresTextArray(optionals: attempts.map { $0.messageId.map(String.init) }))::bigint[],
                \(PostgresTextArray(attempts.map(\.vendor.rawValue)))::text[],
                \(PostgresTextArray(attempts.map(\.tokenSuffix)))::text[],
                \(PostgresTextArray(attempts.map(\.kind)))::text[],
                \(PostgresTextArray(optionals: attempts.map { $0.status.map(String.init) }))::integer[],
                \(PostgresTextArray(optionals: attempts.map(\.reason)))::text[],
                \(PostgresTextArray(optionals: attempts.map(\.vendorId)))::text[],
                \(PostgresTextArray(attempts.map(\.outcome.rawValue)))::text[])
            """)
    }

    /// A user's attempts, newest first.
    public func attempts(appId: Int64, userId: String, limit: Int = PushAttempt.keptPerUser) async throws
        -> [PushAttempt]
    {
        try await database.query(
            """
            SELECT app_id, user_id, message_id, vendor, token_suffix, kind, status, reason, vendor_id, outcome, at
            FROM push_attempts WHERE app_id = \(appId) AND user_id = \(userId)
            ORDER BY id DESC LIMIT \(limit)
            """
        ).map { row in
            PushAttempt(
                appId: try row.decode("app_id"), userId: try row.decode("user_id"),
                messageId: try row.decode("message_id"),
                vendor: PushVendor(rawValue: try row.decode("vendor")) ?? .apns,
                tokenSuffix: try row.decode("token_suffix"), kind: try row.decode("kind"),
                status: try row.decode("status", as: Int32?.self).map(Int.init), reason: try row.decode("reason"),
                vendorId: try row.decode("vendor_id"),
                outcome: PushAttempt.Outcome(rawValue: try row.decode("outcome")) ?? .rejected,
                at: try row.decode("at"))
        }
    }

    /// Whether `userId` is a user of the app (deleted accounts included: their attempts stay readable until the
    /// account's deletion removes them).
    func userExists(appId: Int64, userId: String) async throws -> Bool {
        !(try await database.query("SELECT 1 FROM users WHERE app_id = \(appId) AND id = \(userId)").isEmpty)
    }

    /// Removes a user's attempts (account deletion).
    func deleteAll(on connection: PostgresConnection, appId: Int64, userId: String) async throws {
        _ = try await connection.query("DELETE FROM push_attempts WHERE app_id = \(appId) AND user_id = \(userId)")
    }
}
