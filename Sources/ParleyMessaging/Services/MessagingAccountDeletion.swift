import ParleyAuth
import ParleyJSON
import ParleyPostgres

/// Messaging's part in deleting an account (auth's `AccountDeletion` runs it inside its transaction). Messages
/// the user sent stay under their id (profiles then say `deleted: true`). Friendships end on both sides as
/// tombstones, so incremental friend sync sees them, and each ex-friend gets `friend_removed`; blocks either way go;
/// pending requests from the user are withdrawn (their recipients get `friend_request_withdrawn`) and those to the
/// user rejected; their 1:1 conversations are closed (sends to them answer 1103); the user leaves every group as
/// `GroupService` leaves do.
struct MessagingAccountDeletion: Sendable {
    let groups: GroupService
    let friends: FriendRepository
    let blocks: BlockRepository
    let conversations: ConversationRepository
    let userEvents: UserEvents

    func run(appId: Int64, userId: String, on connection: PostgresConnection) async throws
        -> AccountDeletionParticipant.AfterCommit
    {
        try await friends.lockUsers(on: connection, appId: appId, [userId])
        var recorded: [UserEvent] = []
        let removedFriendData = JSONValue.object(JSONObject([("userId", .string(userId))]))
        for friend in try await friends.unfriendAll(on: connection, appId: appId, userId: userId) {
            recorded.append(UserEvent(kind: .friendRemoved, data: removedFriendData, recipients: [friend]))
        }
        try await blocks.deleteAll(on: connection, appId: appId, involving: userId)
        // Recipients of the user's requests see them withdrawn; senders of requests to the user are not told (the
        // request stays in their list as rejected).
        for request in try await friends.closeAllPending(on: connection, appId: appId, userId: userId)
        where request.status == .withdrawn {
            recorded.append(
                UserEvent(kind: .friendRequestWithdrawn, data: request.eventData(), recipients: [request.toId]))
        }
        try await userEvents.record(recorded, appId: appId, on: connection)
        try await conversations.closeSingleConversations(on: connection, appId: appId, of: userId)
        let groupEvents = try await groups.leaveEveryGroup(appId: appId, userId: userId, on: connection)
        return { [userEvents, recorded, bus = groups.events] in
            userEvents.publish(recorded, appId: appId, origin: nil)
            groupEvents.forEach(bus.publish)
        }
    }
}

extension MessagingModule {
    /// Messaging's part in account deletion, for `AuthModule.accountDeletion(participants:)`.
    public var accountDeletionParticipant: AccountDeletionParticipant {
        let deletion = MessagingAccountDeletion(
            groups: groups, friends: friendRepository, blocks: blockRepository,
            conversations: ConversationRepository(database: friendRepository.database), userEvents: userEvents)
        return AccountDeletionParticipant("messaging") { appId, userId, connection in
            try await deletion.run(appId: appId, userId: userId, on: connection)
        }
    }
}
