import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyPostgres

/// Bans: an owner or admin keeps a user out of the group. A banned member is removed (a `member_banned` notice, and
/// the removal change for their own devices, as a removal); a banned user cannot join nor ask to join (1146), and a
/// pending request of theirs is rejected. Adding them as a member lifts the ban.
extension GroupService {
    func ban(_ rawGroupId: String, userId rawUserId: String, by principal: Principal) async throws -> GroupBan {
        let userId = try MessagingInput.userID(rawUserId, field: "userId")
        guard userId != principal.userId else { throw APIError.cannotRemoveSelf }
        var ban: GroupBan?
        _ = try await change(rawGroupId, by: principal, requiring: .manager) { connection, group, operatorMember in
            let appId = principal.appId
            var published: [MessagingEvent] = []
            if let target = try await groups.member(
                on: connection, appId: appId, groupId: group.groupId, userId: userId)
            {
                guard Self.outranks(operatorMember.role, target.role) else { throw APIError.groupPermissionDenied }
                published += try await removal(
                    on: connection, principal: principal, groupId: group.groupId, userId: userId,
                    event: "member_banned")
            } else {
                guard try await groups.existingUsers(on: connection, appId: appId, userIds: [userId]).contains(userId)
                else { throw APIError.userNotFound.with(message: "no user `\(userId)` in this app") }
            }
            ban = try await groups.ban(
                on: connection, appId: appId, groupId: group.groupId, userId: userId, by: principal.userId)
            if let request = try await groups.joinRequest(
                on: connection, appId: appId, groupId: group.groupId, userId: userId),
                request.status == .pending
            {
                _ = try await groups.handleJoinRequest(
                    on: connection, appId: appId, groupId: group.groupId, userId: userId, status: .rejected,
                    by: principal.userId)
            }
            return published
        }
        guard let ban else { preconditionFailure("the change ran") }
        return ban
    }

    /// Lifts a ban (answers the same when there was none).
    func unban(_ rawGroupId: String, userId rawUserId: String, by principal: Principal) async throws {
        let userId = try MessagingInput.userID(rawUserId, field: "userId")
        _ = try await change(rawGroupId, by: principal, requiring: .manager) { connection, group, _ in
            try await groups.unban(on: connection, appId: principal.appId, groupId: group.groupId, userIds: [userId])
            return []
        }
    }

    /// Owners and admins: the bans, newest first.
    func bans(_ rawGroupId: String, offset: Int, limit: Int, for principal: Principal) async throws -> GroupBanPage {
        let groupId = try MessagingInput.groupID(rawGroupId)
        _ = try await info(groupId, for: principal)
        guard
            let membership = try await groups.member(
                appId: principal.appId, groupId: groupId, userId: principal.userId),
            membership.role.isManager
        else { throw APIError.groupPermissionDenied }
        let page = try await groups.bans(appId: principal.appId, groupId: groupId, offset: offset, limit: limit)
        return GroupBanPage(bans: page.bans, hasMore: page.hasMore)
    }
}
