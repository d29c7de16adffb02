import Foundation
import ParleyObservability
import ParleyPostgres

/// A feature's part in deleting an account (messaging: friends, blocks, groups; push: device tokens). `run` works
/// inside the one deletion transaction, on its connection, so that a failure anywhere rolls every part back; it
/// returns what is left to do once the deletion committed (publishing events), or nil. Auth knows the features only
/// through these: `ParleyApp` hands them over, so auth depends on none of them.
public struct AccountDeletionParticipant: Sendable {
    /// Work after the commit: must not fail (the deletion stands).
    public typealias AfterCommit = @Sendable () -> Void

    /// Names the participant in logs.
    public let name: String
    public let run:
        @Sendable (_ appId: Int64, _ userId: String, _ connection: PostgresConnection) async throws -> AfterCommit?

    public init(
        _ name: String,
        run:
            @escaping @Sendable (_ appId: Int64, _ userId: String, _ connection: PostgresConnection) async throws
            -> AfterCommit?
    ) {
        self.name = name
        self.run = run
    }
}

/// Deletes accounts: the one flow `DELETE /api/users/me` and the admin API share (the password check is the
/// route's). In one transaction, with the user row locked: every session ends (reason `deleted`: close 4501 on
/// their sockets, tokens refused), every participant does its part, and the profile is anonymised (the row stays so
/// that delivered messages still name their sender; `deleted: true` in public profiles). The username stays
/// reserved for `usernameGraceDays`, then the sweep frees it. Deleting a deleted account changes nothing.
public struct AccountDeletion: Sendable {
    let users: UserRepository
    let sessions: SessionService
    let participants: [AccountDeletionParticipant]
    let usernameGraceDays: Int
    let logger: Logger

    public enum Outcome: Sendable, Hashable {
        case unknownUser
        /// Deleted before: nothing changed.
        case alreadyDeleted
        /// Deleted now; `endedSessions` sessions were ended.
        case deleted(endedSessions: Int)
    }

    public func delete(appId: Int64, userId: String) async throws -> Outcome {
        let participants = participants
        let freeUsername = usernameGraceDays == 0
        let (outcome, ended, afterCommit) = try await users.database.withTransaction { connection in
            guard let user = try await users.lockForLogin(on: connection, appId: appId, userId: userId) else {
                return (Outcome.unknownUser, [EndedSessionRow](), [AccountDeletionParticipant.AfterCommit]())
            }
            guard user.deletedAt == nil else { return (.alreadyDeleted, [], []) }
            let ended = try await sessions.sessions.end(
                on: connection, appId: appId, userId: userId, sessionId: nil, reason: .deleted)
            var afterCommit: [AccountDeletionParticipant.AfterCommit] = []
            for participant in participants {
                if let work = try await participant.run(appId, userId, connection) { afterCommit.append(work) }
            }
            try await users.anonymise(on: connection, appId: appId, userId: userId, freeUsername: freeUsername)
            return (.deleted(endedSessions: ended.count), ended, afterCommit)
        }
        sessions.announce(ended)
        for work in afterCommit { work() }
        if case .deleted(let count) = outcome {
            logger.info(
                "account deleted",
                ["app_id": .int(Int(appId)), "user_id": .string(userId), "ended_sessions": .int(count)])
        }
        return outcome
    }
}
