import ParleyAuth
import ParleyJSON
import ParleyPostgres

/// Messaging's part in deleting an account (auth's `AccountDeletion` runs it inside its transaction). Messages
/// the user sent stay under their id (profiles then say `deleted: true`). Friendships end on both sides as
/// tombstones, so incremental friend sync sees them, and each ex-friend gets `friend_removed`; blocks either way go;
/// pending requests from the user are withdrawn (their recipients get `friend_request_withdrawn`) and those to the
/// user rejected; the user leaves every group as `GroupService` leaves do.
struct MessagingAccountDeletion: Sendable {
    let groups: GroupService
    let userEvents: UserEvents

    func run(appId: Int64, userId: String, on connection: PostgresConnection) async throws
        -> AccountDeletionParticipant.AfterCommit
    {
        var recorded: [UserEvent] = []
        let removedFriendData = JSONValue.object(JSONObject([("userId", .string(userId))]))
        for friend in try await endFriendships(appId: appId, userId: userId, on: connection) {
            recorded.append(UserEvent(kind: .friendRemoved, data: removedFriendData, recipients: [friend]))
        }
        _ = try await connection.query(
            """
            DELETE FROM user_blocks WHERE app_id = \(appId) AND (blocker_id = \(userId) OR blocked_id = \(userId))
            """)
        recorded += try await closePendingRequests(appId: appId, userId: userId, on: connection)
        try await userEvents.record(recorded, appId: appId, on: connection)
        let groupEvents = try await groups.leaveEveryGroup(appId: appId, userId: userId, on: connection)
        return { [userEvents, recorded, bus = groups.events] in
            userEvents.publish(recorded, appId: appId, originSessionId: nil)
            groupEvents.forEach(bus.publish)
        }
    }

    /// Turns every live friendship row of the user, on both sides, into a tombstone a friend-list sync sees (the
    /// same xid and position every friendship write sets); returns the ex-friends.
    private func endFriendships(appId: Int64, userId: String, on connection: PostgresConnection) async throws
        -> [String]
    {
        try await connection.query(
            """
            UPDATE friendships SET active = false, xid = pg_current_xact_id(), position = nextval('stream_positions')
            WHERE app_id = \(appId) AND (user_id = \(userId) OR friend_id = \(userId)) AND active
            RETURNING user_id
            """
        ).compactMap { row in
            let owner = try row.decode("user_id", as: String.self)
            return owner == userId ? nil : owner
        }
    }

    /// Withdraws the user's pending requests and rejects those to them; returns `friend_request_withdrawn` for the
    /// recipients of the withdrawn ones (nobody is told of a rejection by a deleted account: `friend_removed` is
    /// not due, and the sender's request simply stays unanswered in their list as rejected).
    private func closePendingRequests(appId: Int64, userId: String, on connection: PostgresConnection) async throws
        -> [UserEvent]
    {
        let rows = try await connection.query(
            """
            UPDATE friend_requests
            SET status = CASE WHEN from_id = \(userId) THEN 'withdrawn' ELSE 'rejected' END, handled_at = now()
            WHERE app_id = \(appId) AND status = 'pending' AND (from_id = \(userId) OR to_id = \(userId))
            RETURNING id, from_id, to_id, status
            """)
        return try rows.compactMap { row in
            guard try row.decode("status", as: String.self) == "withdrawn" else { return nil }
            let to = try row.decode("to_id", as: String.self)
            let data = JSONValue.object(
                JSONObject([
                    ("id", .string(String(try row.decode("id", as: Int64.self)))),
                    ("fromId", .string(try row.decode("from_id", as: String.self))), ("toId", .string(to)),
                ]))
            return UserEvent(kind: .friendRequestWithdrawn, data: data, recipients: [to])
        }
    }
}

extension MessagingModule {
    /// Messaging's part in account deletion, for `AuthModule.accountDeletion(participants:)`.
    public var accountDeletionParticipant: AccountDeletionParticipant {
        let deletion = MessagingAccountDeletion(groups: groups, userEvents: userEvents)
        return AccountDeletionParticipant("messaging") { appId, userId, connection in
            try await deletion.run(appId: appId, userId: userId, on: connection)
        }
    }
}
