import ParleyPostgres

/// Nonces of signed requests. The (app_id, nonce) primary key turns a replay into a unique violation, which
/// also holds across instances; rows outlive the timestamp window and are purged afterwards.
struct NonceRepository: Sendable {
    let database: PostgresClient

    /// False when the nonce was already used by this app.
    func claim(appId: Int64, nonce: String, keepSeconds: Int) async throws -> Bool {
        do {
            _ = try await database.query(
                """
                INSERT INTO request_nonces (app_id, nonce, expires_at)
                VALUES (\(appId), \(nonce), now() + make_interval(secs => \(keepSeconds)))
                """)
            return true
        } catch {
            if error.isUniqueViolation { return false }
            throw error
        }
    }
}
