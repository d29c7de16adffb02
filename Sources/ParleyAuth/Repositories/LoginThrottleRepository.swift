import Foundation
import ParleyPostgres

/// Failed-login throttles (migrations/0014): progressive delays per account and source, kept in PostgreSQL so
/// they hold across instances, and counted under row locks so parallel guesses cannot race past them.
struct LoginThrottleRepository: Sendable {
    let database: PostgresClient

    /// Counts an attempt against every source before the password is checked: nil when it may go ahead, else the
    /// seconds to wait (nothing counted).
    func attempt(
        appId: Int64, username: String, sources: [LoginSource], allowance: Int, firstDelaySeconds: Int,
        windowSeconds: Int, maxDelaySeconds: Int
    ) async throws -> Int? {
        let rows = try await database.query(
            """
            SELECT parley_login_attempt(\(appId), \(username),
                                        \(PostgresTextArray(sources.map(\.key)))::text[],
                                        \(PostgresTextArray(sources.map { String($0.allowance(perSource: allowance)) }))::integer[],
                                        \(firstDelaySeconds)::integer, \(windowSeconds)::integer,
                                        \(maxDelaySeconds)::integer)
            """)
        let wait = try rows[0].decode(0, as: Int.self)
        return wait > 0 ? wait : nil
    }

    /// A successful login: its own source starts afresh, and the attempt it counted against the whole account is
    /// taken back.
    func succeeded(appId: Int64, username: String, sources: [LoginSource]) async throws {
        let own = sources.filter { $0 != .account }.map(\.key)
        _ = try await database.query(
            """
            WITH cleared AS (
                DELETE FROM login_throttles
                WHERE app_id = \(appId) AND username = \(username) AND source = ANY(\(PostgresTextArray(own))::text[]))
            UPDATE login_throttles SET failures = greatest(failures - 1, 0)
            WHERE app_id = \(appId) AND username = \(username) AND source = \(LoginSource.account.key)
              AND \(sources.contains(.account))
            """)
    }

    /// Housekeeping: sources quiet for a whole window after their last delay.
    func purge(windowSeconds: Int) async throws {
        _ = try await database.query(
            """
            DELETE FROM login_throttles WHERE next_attempt_at < now() - make_interval(secs => \(windowSeconds))
            """)
    }
}
