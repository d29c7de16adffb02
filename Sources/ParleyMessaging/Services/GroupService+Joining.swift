import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyPostgres

/// Joining by oneself: an `open` group at once, an `approval` group through a request an owner or admin accepts or
/// rejects. A join writes the `member_joined` notify message (members, the new one included); requests are user
/// events (`group_join_request`, `group_join_request_handled`) to the owner and admins and to the requester, in the
/// change's transaction (sync) and published after it.
extension GroupService {
    static let maxJoinMessageCharacters = 200

    func join(_ rawGroupId: String, message rawMessage: String?, by principal: Principal) async throws -> JoinResult {
        let groupId = try MessagingInput.groupID(rawGroupId)
        let message = try Self.joinMessage(rawMessage)
        let appId = principal.appId
        let (result, published) = try await database.withTransaction { connection in
            guard let group = try await groups.lock(on: connection, appId: appId, groupId: groupId) else {
                throw APIError.groupNotFound
            }
            guard !group.dissolved else { throw APIError.groupDissolved }
            guard
                try await groups.member(on: connection, appId: appId, groupId: groupId, userId: principal.userId)
                    == nil
            else { throw APIError.alreadyGroupMember }
            if group.joinPolicy != .inviteOnly,
                try await groups.isBanned(on: connection, appId: appId, groupId: groupId, userId: principal.userId)
            {
                throw APIError.bannedFromGroup
            }
            switch group.joinPolicy {
            case .inviteOnly:
                throw APIError.groupInviteOnly
            case .open:
                let notices = try await admit(principal.userId, to: group, on: connection, by: principal)
                let after = try await groups.lock(on: connection, appId: appId, groupId: groupId) ?? group
                return (JoinResult(joined: true, group: after, request: nil), notices)
            case .approval:
                let (request, opened) = try await groups.openJoinRequest(
                    on: connection, appId: appId, groupId: groupId, userId: principal.userId, message: message)
                guard opened else { return (JoinResult(joined: false, group: nil, request: request), []) }
                let managers = try await groups.managers(on: connection, appId: appId, groupId: groupId)
                let event = UserEvent(
                    kind: .groupJoinRequest, data: request.eventData, recipients: managers + [principal.userId])
                try await UserEvents(events: events).record([event], appId: appId, on: connection)
                return (
                    JoinResult(joined: false, group: nil, request: request),
                    UserEvents.messagingEvents([event], appId: appId, origin: principal.origin)
                )
            }
        }
        published.forEach(events.publish)
        return result
    }

    /// Owners and admins: the pending requests, oldest first.
    func joinRequests(_ rawGroupId: String, offset: Int, limit: Int, for principal: Principal) async throws
        -> JoinRequestPage
    {
        let groupId = try MessagingInput.groupID(rawGroupId)
        _ = try await info(groupId, for: principal)
        guard
            let membership = try await groups.member(
                appId: principal.appId, groupId: groupId, userId: principal.userId),
            membership.role.isManager
        else { throw APIError.groupPermissionDenied }
        let page = try await groups.pendingJoinRequests(
            appId: principal.appId, groupId: groupId, offset: offset, limit: limit)
        return JoinRequestPage(requests: page.requests, hasMore: page.hasMore)
    }

    /// Owners and admins accept (the requester joins, within the member limit) or reject a pending request.
    func handleJoinRequest(
        _ groupId: String, userId rawUserId: String, accept: Bool, by principal: Principal
    ) async throws -> GroupJoinRequest {
        let userId = try MessagingInput.userID(rawUserId, field: "userId")
        var handled: GroupJoinRequest?
        _ = try await change(groupId, by: principal, requiring: .manager) { connection, group, _ in
            let appId = principal.appId
            guard
                let request = try await groups.joinRequest(
                    on: connection, appId: appId, groupId: group.groupId, userId: userId)
            else { throw APIError.joinRequestNotFound }
            guard request.status == .pending else { throw APIError.joinRequestHandled }
            var published: [MessagingEvent] = []
            // Someone an admin added meanwhile is accepted as they are.
            if accept,
                try await groups.member(on: connection, appId: appId, groupId: group.groupId, userId: userId) == nil
            {
                published += try await admit(userId, to: group, on: connection, by: principal)
            }
            let done = try await groups.handleJoinRequest(
                on: connection, appId: appId, groupId: group.groupId, userId: userId,
                status: accept ? .accepted : .rejected, by: principal.userId)
            handled = done
            let managers = try await groups.managers(on: connection, appId: appId, groupId: group.groupId)
            let event = UserEvent(
                kind: .groupJoinRequestHandled, data: done.eventData, recipients: managers + [userId])
            try await UserEvents(events: events).record([event], appId: appId, on: connection)
            return published
                + UserEvents.messagingEvents([event], appId: appId, origin: principal.origin)
        }
        // `change` returns only after its body ran and committed.
        guard let handled else { throw PostgresError(kind: .decoding, message: "join request not handled") }
        return handled
    }

    /// Anyone of the app: the open and approval groups whose id is `q` or whose name starts with it.
    func searchGroups(_ rawQuery: String?, offset: Int, limit: Int, for principal: Principal) async throws
        -> PublicGroupPage
    {
        guard let rawQuery else { throw APIError.validationFailed.with(message: "`q` is required") }
        let query = try MessagingInput.name(rawQuery, field: "q")
        let page = try await groups.searchPublic(appId: principal.appId, query: query, offset: offset, limit: limit)
        return PublicGroupPage(groups: page.groups, hasMore: page.hasMore)
    }

    /// Adds `userId` (the group locked) and writes `member_joined`; the member limit holds.
    private func admit(
        _ userId: String, to group: GroupInfo, on connection: PostgresConnection, by principal: Principal
    )
        async throws -> [MessagingEvent]
    {
        guard group.memberCount + 1 <= configuration.groupMemberLimit else { throw APIError.groupFull }
        _ = try await groups.addMembers(
            on: connection, appId: principal.appId, groupId: group.groupId, userIds: [userId])
        var notice = try await notify(
            on: connection, principal: principal, groupId: group.groupId, event: "member_joined",
            fields: [("userId", .string(userId))])
        notice.membershipChanged = true
        return [notice]
    }

    private static func joinMessage(_ raw: String?) throws(APIError) -> String {
        guard let raw, !raw.allSatisfy(\.isWhitespace) else { return "" }
        return try MessagingInput.text(raw, field: "message", maxCharacters: maxJoinMessageCharacters)
    }
}
