import ParleyPostgres

/// Registrations per client address and app (migrations/0016): a token bucket in PostgreSQL, so that the limit
/// holds across instances.
struct RegistrationThrottleRepository: Sendable {
    let database: PostgresClient

    /// Takes a token for `source` (the address's rate-limit key): nil when the registration may go ahead, else the
    /// seconds until it may.
    func attempt(appId: Int64, source: String, perHour: Int) async throws -> Int? {
        let rows = try await database.query(
            "SELECT parley_registration_attempt(\(appId), \(source), \(perHour)::integer)")
        let wait = try rows[0].decode(0, as: Int.self)
        return wait > 0 ? wait : nil
    }

    /// Housekeeping: a bucket untouched for an hour is full again, so it carries nothing.
    func purge() async throws {
        _ = try await database.query(
            "DELETE FROM registration_throttles WHERE updated_at < now() - interval '1 hour'")
    }
}
