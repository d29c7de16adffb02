import ParleyPostgres

/// Bans and unbans accounts (`parley user ban|unban`, `POST /api/admin/users/{userId}/ban|unban`). A ban keeps the account's data, ends
/// every session in the same transaction (NOTIFY tells every instance: their sockets get `session_ended {reason:
/// banned}` and close 4501) and makes password and signed logins answer 1043 until it is lifted.
public struct AccountBans: Sendable {
    let users: UserRepository
    let sessions: SessionRepository

    public init(database: PostgresClient) {
        users = UserRepository(database: database)
        sessions = SessionRepository(database: database)
    }

    /// What a ban or unban found.
    public enum Outcome: Sendable, Hashable {
        case unknownUser
        /// Done; `endedSessions` sessions were ended (none for an unban).
        case done(endedSessions: Int)
    }

    public func ban(appId: Int64, userId: String) async throws -> Outcome {
        guard let ended = try await banEndingSessions(appId: appId, userId: userId) else { return .unknownUser }
        return .done(endedSessions: ended.count)
    }

    /// Bans and answers the sessions it ended (nil: no such user), for a server that announces them at once.
    func banEndingSessions(appId: Int64, userId: String) async throws -> [EndedSessionRow]? {
        try await users.database.withTransaction { connection in
            guard try await users.setBanned(on: connection, appId: appId, userId: userId, banned: true) else {
                return nil
            }
            return try await sessions.end(
                on: connection, appId: appId, userId: userId, sessionId: nil, reason: .banned)
        }
    }

    public func unban(appId: Int64, userId: String) async throws -> Outcome {
        try await users.database.withTransaction { connection in
            try await users.setBanned(on: connection, appId: appId, userId: userId, banned: false)
                ? .done(endedSessions: 0) : .unknownUser
        }
    }
}
