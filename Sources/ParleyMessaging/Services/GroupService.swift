import ParleyAuth
import ParleyCrypto
import ParleyHTTP
import ParleyJSON
import ParleyPostgres

/// Groups: create, members (add, remove, role, block), leave, transfer, dissolve. Every change runs in one
/// transaction with the notify message members see in the conversation, and is published after it commits.
public struct GroupService: Sendable {
    let configuration: MessagingConfiguration
    let database: PostgresClient
    let groups: GroupRepository
    let messages: MessageRepository
    let events: MessagingEvents
    let avatars: AvatarAuthorizer?
    /// The caller's group list tolerates replica lag.
    let reads: PostgresReadRouter

    public static let maxMembersPerRequest = 500
    /// Path segments of the group routes that a group id would collide with.
    static let reservedGroupIDs: Set<String> = ["search"]

    /// The key to store as the group's avatar: shape-checked, then through the file service's avatar check (the
    /// setter must be able to read it, and it must be an image), which answers the avatar record's own key.
    func avatarKey(_ raw: String, groupId: String, by principal: Principal) async throws -> String {
        let key = try MessagingInput.objectKey(raw, field: "avatarKey")
        guard let avatars else { return key }
        return try await avatars(key, .group(groupId), principal.appId, principal.userId)
    }

    public func create(
        name rawName: String, avatarKey rawAvatar: String?, memberIds rawIds: [String],
        joinPolicy: GroupJoinPolicy? = nil, by principal: Principal
    ) async throws -> GroupInfo {
        try await create(
            name: rawName, avatarKey: rawAvatar, memberIds: rawIds, joinPolicy: joinPolicy, groupId: nil, by: principal)
    }

    /// `groupId`: the id the app's backend chose (the admin API), else a random one; `principal` is the owner (the
    /// admin API checks that they exist: `checkOwner`). `joinPolicy`: `invite_only` unless given.
    func create(
        name rawName: String, avatarKey rawAvatar: String?, memberIds rawIds: [String],
        joinPolicy: GroupJoinPolicy? = nil, groupId chosenID: String?, checkOwner: Bool = false,
        by principal: Principal
    ) async throws -> GroupInfo {
        let name = try MessagingInput.name(rawName, field: "name")
        if let rawAvatar { _ = try MessagingInput.objectKey(rawAvatar, field: "avatarKey") }
        let memberIds = try uniqueUserIDs(rawIds, field: "memberIds").filter { $0 != principal.userId }
        guard memberIds.count + 1 <= configuration.groupMemberLimit else { throw APIError.groupFull }
        let groupId =
            try chosenID.map { raw throws(APIError) in try MessagingInput.groupID(raw) }
            ?? "g_" + SecureRandom.token(bytes: 12)
        guard !Self.reservedGroupIDs.contains(groupId) else {
            throw APIError.validationFailed.with(message: "`groupId` `\(groupId)` is reserved")
        }
        var avatarKey: String?
        if let rawAvatar { avatarKey = try await self.avatarKey(rawAvatar, groupId: groupId, by: principal) }
        var published: [MessagingEvent] = []
        let group = try await database.withTransaction { connection in
            published = []
            let required = checkOwner ? [principal.userId] + memberIds : memberIds
            let existing = try await groups.existingUsers(on: connection, appId: principal.appId, userIds: required)
            if let missing = required.first(where: { !existing.contains($0) }) {
                throw APIError.userNotFound.with(message: "no user `\(missing)` in this app")
            }
            if chosenID != nil, try await groups.find(on: connection, appId: principal.appId, groupId: groupId) != nil {
                throw APIError.groupIdTaken
            }
            _ = try await groups.insert(
                on: connection, appId: principal.appId, groupId: groupId, name: name,
                avatarKey: avatarKey, ownerId: principal.userId, joinPolicy: joinPolicy ?? .inviteOnly)
            _ = try await groups.addMembers(
                on: connection, appId: principal.appId, groupId: groupId,
                userIds: [principal.userId], role: .owner)
            _ = try await groups.addMembers(
                on: connection, appId: principal.appId, groupId: groupId, userIds: memberIds)
            let notice = try await notify(
                on: connection, principal: principal, groupId: groupId, event: "group_created",
                fields: [("name", .string(name)), ("userIds", Self.idList(memberIds))])
            published.append(notice)
            return try await groups.lock(on: connection, appId: principal.appId, groupId: groupId)!
        }
        published.forEach(events.publish)
        return group
    }

    /// A lag-tolerant read (`reads`), like the member list.
    public func info(_ groupId: String, for principal: Principal) async throws -> GroupInfo {
        try await reads.read { [groups] database in
            try await Self.info(groupId, for: principal, in: groups.on(database))
        }
    }

    private static func info(_ groupId: String, for principal: Principal, in groups: GroupRepository) async throws
        -> GroupInfo
    {
        guard let group = try await groups.find(appId: principal.appId, groupId: groupId) else {
            throw APIError.groupNotFound
        }
        guard try await groups.member(appId: principal.appId, groupId: groupId, userId: principal.userId) != nil else {
            throw APIError.notMember
        }
        return group
    }

    /// The caller's groups, a page at a time (see `GroupRepository.groups(of:)`).
    func myGroups(after cursor: String?, limit: Int, for principal: Principal) async throws -> GroupPage {
        let page = try await reads.read { [groups] database in
            try await groups.on(database).groups(
                of: principal.userId, appId: principal.appId, after: cursor, limit: limit)
        }
        return GroupPage(
            groups: page.groups, cursor: page.hasMore ? page.groups.last?.groupId : nil, hasMore: page.hasMore)
    }

    func members(_ groupId: String, after cursor: MemberCursor?, offset: Int, limit: Int, for principal: Principal)
        async throws -> MemberPage
    {
        let page = try await reads.read { [groups] database in
            let groups = groups.on(database)
            _ = try await Self.info(groupId, for: principal, in: groups)
            return try await groups.members(
                appId: principal.appId, groupId: groupId, after: cursor, offset: offset, limit: limit)
        }
        return MemberPage(members: page.members, hasMore: page.next != nil, cursor: page.next?.description)
    }

    /// Owners and admins change the group's profile (name, avatar, announcement, introduction, `ex`, join policy).
    func update(_ groupId: String, _ change: GroupProfileChange, by principal: Principal) async throws -> GroupInfo {
        try await update(groupId, change, by: principal, requiring: .manager)
    }

    /// `requiring` `.app`: the admin API (the avatar is checked as the owner's). Members see a `group_updated`
    /// notify message with the fields that changed (`ex` too: the app's clients read it from there).
    func update(
        _ groupId: String, _ change: GroupProfileChange, by principal: Principal, requiring requirement: Requirement
    )
        async throws -> GroupInfo
    {
        guard !change.isEmpty else { throw GroupProfileChange.nothingGiven }
        var avatarKey: String?? = nil
        switch change.avatarKey {
        case .none: break
        case .some(.none): avatarKey = .some(nil)
        case .some(.some(let raw)):
            // Someone outside the group is refused before an avatar record is made for it (the role is checked
            // with the change itself).
            var setter = principal
            if requirement == .app {
                guard let group = try await groups.find(appId: principal.appId, groupId: groupId) else {
                    throw APIError.groupNotFound
                }
                setter = Principal(appId: principal.appId, userId: group.ownerId, sessionId: "")
            } else {
                _ = try await info(groupId, for: principal)
            }
            avatarKey = try await self.avatarKey(raw, groupId: groupId, by: setter)
        }
        return try await self.change(groupId, by: principal, requiring: requirement) { connection, _, _ in
            try await groups.updateProfile(
                on: connection, appId: principal.appId, groupId: groupId, change: change, avatarKey: avatarKey)
            var fields: [(String, JSONValue)] = []
            if let name = change.name { fields.append(("name", .string(name))) }
            if let avatarKey { fields.append(("avatarKey", avatarKey.map(JSONValue.string) ?? .null)) }
            if let announcement = change.announcement { fields.append(("announcement", .string(announcement))) }
            if let introduction = change.introduction { fields.append(("introduction", .string(introduction))) }
            if let ex = change.ex { fields.append(("ex", ex ?? .null)) }
            if let policy = change.joinPolicy { fields.append(("joinPolicy", .string(policy.rawValue))) }
            return [
                try await notify(
                    on: connection, principal: principal, groupId: groupId, event: "group_updated",
                    fields: fields)
            ]
        }
    }

    /// Owners and admins add members; they see history from their joining on.
    public func addMembers(_ groupId: String, userIds rawIds: [String], by principal: Principal) async throws
        -> GroupInfo
    {
        try await addMembers(groupId, userIds: rawIds, by: principal, requiring: .manager)
    }

    func addMembers(_ groupId: String, userIds rawIds: [String], by principal: Principal, requiring: Requirement)
        async throws -> GroupInfo
    {
        let userIds = try uniqueUserIDs(rawIds, field: "userIds")
        guard !userIds.isEmpty else { throw APIError.validationFailed.with(message: "`userIds` must not be empty") }
        return try await change(groupId, by: principal, requiring: requiring) { connection, group, _ in
            let existing = try await groups.existingUsers(on: connection, appId: principal.appId, userIds: userIds)
            if let missing = userIds.first(where: { !existing.contains($0) }) {
                throw APIError.userNotFound.with(message: "no user `\(missing)` in this app")
            }
            let added = try await groups.addMembers(
                on: connection, appId: principal.appId, groupId: groupId,
                userIds: userIds)
            guard group.memberCount + added.count <= configuration.groupMemberLimit else { throw APIError.groupFull }
            guard !added.isEmpty else { return [] }
            // An owner or admin adding a banned user lifts the ban.
            try await groups.unban(on: connection, appId: principal.appId, groupId: groupId, userIds: added)
            var notice = try await notify(
                on: connection, principal: principal, groupId: groupId, event: "member_added",
                fields: [("userIds", Self.idList(added))])
            notice.membershipChanged = true
            return [notice]
        }
    }

    /// The owner removes anyone but themself; admins remove plain members.
    public func removeMember(_ groupId: String, userId rawID: String, by principal: Principal) async throws -> GroupInfo
    {
        let userId = try MessagingInput.userID(rawID, field: "userId")
        guard userId != principal.userId else { throw APIError.cannotRemoveSelf }
        return try await removeMembers(groupId, userIds: [userId], by: principal, requiring: .manager)
    }

    /// Removes each of `userIds` (validated) in one transaction; the owner cannot be removed (1112).
    func removeMembers(_ groupId: String, userIds: [String], by principal: Principal, requiring: Requirement)
        async throws -> GroupInfo
    {
        try await change(groupId, by: principal, requiring: requiring) { connection, _, operatorMember in
            var published: [MessagingEvent] = []
            for userId in userIds {
                let target = try await member(userId, of: groupId, on: connection, appId: principal.appId)
                guard Self.outranks(operatorMember.role, target.role) else { throw APIError.groupPermissionDenied }
                published += try await removal(
                    on: connection, principal: principal, groupId: groupId, userId: userId,
                    event: "member_removed")
            }
            return published
        }
    }

    /// `userId`'s membership of the group, or 1103 naming them.
    func member(_ userId: String, of groupId: String, on connection: PostgresConnection, appId: Int64)
        async throws -> Membership
    {
        guard let member = try await groups.member(on: connection, appId: appId, groupId: groupId, userId: userId)
        else {
            throw APIError.userNotFound.with(message: "`\(userId)` is not a member of this group")
        }
        return member
    }

    public func leave(_ groupId: String, by principal: Principal) async throws {
        _ = try await change(groupId, by: principal, requiring: .member) { connection, _, membership in
            guard membership.role != .owner else { throw APIError.ownerMustTransfer }
            return try await removal(
                on: connection, principal: principal, groupId: groupId, userId: principal.userId,
                event: "member_left")
        }
    }

    /// PATCH a member: `role` (owner only; `owner` transfers ownership) and `blocked` (owners and admins, over
    /// members they outrank).
    public func updateMember(
        _ groupId: String, userId rawID: String, role rawRole: String?, blocked: Bool?,
        by principal: Principal
    ) async throws -> GroupInfo {
        let userId = try MessagingInput.userID(rawID, field: "userId")
        let role = try rawRole.map { raw throws(APIError) -> GroupRole in
            guard let role = GroupRole(rawValue: raw) else {
                throw APIError.validationFailed.with(message: "`role` must be owner, admin or member")
            }
            return role
        }
        guard role != nil || blocked != nil else {
            throw APIError.validationFailed.with(message: "give at least one of `role`, `blocked`")
        }
        if role == .owner { return try await transfer(groupId, to: userId, by: principal) }
        return try await change(groupId, by: principal, requiring: .manager) { connection, _, operatorMember in
            let target = try await member(userId, of: groupId, on: connection, appId: principal.appId)
            var notices: [MessagingEvent] = []
            if let role, role != target.role {
                guard operatorMember.role == .owner, target.role != .owner else { throw APIError.groupPermissionDenied }
                try await groups.setRole(
                    on: connection, appId: principal.appId, groupId: groupId, userId: userId, role: role)
                notices.append(
                    try await notify(
                        on: connection, principal: principal, groupId: groupId,
                        event: "role_changed",
                        fields: [("userId", .string(userId)), ("role", .string(role.rawValue))]))
            }
            if let blocked, blocked != target.blocked {
                guard Self.outranks(operatorMember.role, target.role) else { throw APIError.groupPermissionDenied }
                try await groups.setBlocked(
                    on: connection, appId: principal.appId, groupId: groupId, userId: userId,
                    blocked: blocked)
                notices.append(
                    try await notify(
                        on: connection, principal: principal, groupId: groupId,
                        event: blocked ? "member_blocked" : "member_unblocked",
                        fields: [("userId", .string(userId))]))
            }
            return notices
        }
    }

    /// The owner hands ownership to another member and becomes an admin.
    public func transfer(_ groupId: String, to rawID: String, by principal: Principal) async throws -> GroupInfo {
        try await transfer(groupId, to: rawID, by: principal, requiring: .owner)
    }

    /// `requiring` `.app`: the admin API hands the current owner's group to `rawID`.
    func transfer(_ groupId: String, to rawID: String, by principal: Principal, requiring: Requirement) async throws
        -> GroupInfo
    {
        let userId = try MessagingInput.userID(rawID, field: "userId")
        return try await change(groupId, by: principal, requiring: requiring) { connection, group, _ in
            let currentOwner = requiring == .app ? group.ownerId : principal.userId
            guard userId != currentOwner else { return [] }
            guard
                try await groups.member(on: connection, appId: principal.appId, groupId: groupId, userId: userId) != nil
            else { throw APIError.userNotFound.with(message: "`\(userId)` is not a member of this group") }
            try await groups.setRole(
                on: connection, appId: principal.appId, groupId: groupId, userId: currentOwner,
                role: .admin)
            try await groups.setRole(
                on: connection, appId: principal.appId, groupId: groupId, userId: userId, role: .owner)
            return [
                try await notify(
                    on: connection, principal: principal, groupId: groupId, event: "owner_transferred",
                    fields: [("userId", .string(userId))])
            ]
        }
    }

    /// The owner dissolves the group: members keep the history, nobody can post any more.
    public func dissolve(_ groupId: String, by principal: Principal) async throws {
        try await dissolve(groupId, by: principal, requiring: .owner)
    }

    func dissolve(_ groupId: String, by principal: Principal, requiring: Requirement) async throws {
        _ = try await change(groupId, by: principal, requiring: requiring) { connection, _, _ in
            let notice = try await notify(
                on: connection, principal: principal, groupId: groupId,
                event: "group_dissolved", fields: [])
            try await groups.markDissolved(on: connection, appId: principal.appId, groupId: groupId)
            return [notice]
        }
    }

    /// A deleted account leaves every group it is in, on the deletion's transaction, with the notify messages a
    /// transfer and a leave write: an owner's group passes to its heir (`GroupRepository.heir`) first, and a group
    /// left empty is dissolved. Returns the events to publish after the commit.
    func leaveEveryGroup(appId: Int64, userId: String, on connection: PostgresConnection) async throws
        -> [MessagingEvent]
    {
        // No session of the deleted account acts here: nothing to skip when publishing.
        let principal = Principal(appId: appId, userId: userId, sessionId: "")
        var published: [MessagingEvent] = []
        try await groups.deleteJoinRequests(on: connection, appId: appId, userId: userId)
        try await groups.deleteBans(on: connection, appId: appId, userId: userId)
        for groupId in try await groups.activeGroups(on: connection, appId: appId, userId: userId) {
            guard let group = try await groups.lock(on: connection, appId: appId, groupId: groupId), !group.dissolved,
                let membership = try await groups.member(
                    on: connection, appId: appId, groupId: groupId, userId: userId)
            else { continue }
            let heir =
                membership.role == .owner
                ? try await groups.heir(on: connection, appId: appId, groupId: groupId, leaving: userId) : nil
            if let heir {
                try await groups.setRole(on: connection, appId: appId, groupId: groupId, userId: userId, role: .admin)
                try await groups.setRole(on: connection, appId: appId, groupId: groupId, userId: heir, role: .owner)
                published.append(
                    try await notify(
                        on: connection, principal: principal, groupId: groupId, event: "owner_transferred",
                        fields: [("userId", .string(heir))]))
            }
            published += try await removal(
                on: connection, principal: principal, groupId: groupId, userId: userId, event: "member_left")
            if membership.role == .owner && heir == nil {
                published.append(
                    try await notify(
                        on: connection, principal: principal, groupId: groupId, event: "group_dissolved", fields: []))
                try await groups.markDissolved(on: connection, appId: appId, groupId: groupId)
            }
        }
        return published
    }

    // MARK: Helpers

    /// Who may make a change: a member, an owner or admin, the owner; or the app itself (the admin API: no
    /// membership needed, the owner's powers).
    enum Requirement { case member, manager, owner, app }

    /// Runs `body` in a transaction with the group locked and the operator's membership checked, publishes the
    /// events it returns after COMMIT, and answers the group as it is afterwards.
    func change(
        _ groupId: String, by principal: Principal, requiring requirement: Requirement,
        _ body: (PostgresConnection, GroupInfo, Membership) async throws -> [MessagingEvent]
    )
        async throws -> GroupInfo
    {
        let groupId = try MessagingInput.groupID(groupId)
        let (group, published) = try await database.withTransaction { connection in
            guard let group = try await groups.lock(on: connection, appId: principal.appId, groupId: groupId) else {
                throw APIError.groupNotFound
            }
            let found =
                requirement == .app
                ? Membership.app(principal.userId, groupId: groupId)
                : try await groups.member(
                    on: connection, appId: principal.appId, groupId: groupId,
                    userId: principal.userId)
            guard let membership = found else { throw APIError.notMember }
            guard !group.dissolved else { throw APIError.groupDissolved }
            switch requirement {
            case .member, .app: break
            case .manager: guard membership.role.isManager else { throw APIError.groupPermissionDenied }
            case .owner: guard membership.role == .owner else { throw APIError.groupPermissionDenied }
            }
            let published = try await body(connection, group, membership)
            let after = try await groups.lock(on: connection, appId: principal.appId, groupId: groupId) ?? group
            return (after, published)
        }
        published.forEach(events.publish)
        return group
    }

    /// Writes the notify message first (the leaving user is still a member and sees it), then removes them and
    /// records the removal for their own sync.
    func removal(
        on connection: PostgresConnection, principal: Principal, groupId: String, userId: String,
        event: String
    ) async throws -> [MessagingEvent] {
        var notice = try await notify(
            on: connection, principal: principal, groupId: groupId, event: event,
            fields: [("userIds", Self.idList([userId]))])
        try await groups.removeMember(on: connection, appId: principal.appId, groupId: groupId, userId: userId)
        let change = JSONValue.object(
            JSONObject([
                ("conversationId", .string(ConversationID.group(groupId))), ("groupId", .string(groupId)),
                ("removed", .bool(true)), ("operatorId", .string(principal.userId)),
            ]))
        try await groups.recordMembershipChange(
            on: connection, appId: principal.appId, groupId: groupId, userId: userId,
            payload: change.serializedString)
        notice.audience = .conversationMembersAnd([userId])
        notice.membershipChanged = true
        var ownChange = MessagingEvent(
            appId: principal.appId, conversationId: ConversationID.group(groupId),
            audience: .user(userId), origin: principal.origin,
            payload: .conversation(change))
        ownChange.membershipChanged = true
        return [notice, ownChange]
    }

    /// A notify message `{event, operatorId, ...fields}` in the group's conversation.
    func notify(
        on connection: PostgresConnection, principal: Principal, groupId: String, event: String,
        fields: [(String, JSONValue)]
    ) async throws -> MessagingEvent {
        let content = JSONValue.object(
            JSONObject(
                [("event", .string(event)), ("operatorId", .string(principal.userId))]
                    + fields))
        let outcome = try await messages.send(
            MessageRepository.NewMessage(
                appId: principal.appId, conversationId: ConversationID.group(groupId), chatType: .group,
                fromId: principal.userId, toId: groupId, msgType: .notify, content: content.serialized(), extra: nil,
                clientMsgId: "notify-" + SecureRandom.token(bytes: 12), system: true), on: connection)
        guard case .stored(let message) = outcome else {
            throw PostgresError(kind: .decoding, message: "notify message not stored: \(outcome)")
        }
        return MessagingEvent(
            appId: principal.appId, conversationId: message.conversationId,
            audience: .conversationMembers, origin: nil, payload: .message(message))
    }

    static func outranks(_ role: GroupRole, _ other: GroupRole) -> Bool {
        switch (role, other) {
        case (.owner, .admin), (.owner, .member), (.admin, .member): true
        default: false
        }
    }

    private static func idList(_ ids: [String]) -> JSONValue { .array(ids.map(JSONValue.string)) }

    func uniqueUserIDs(_ raw: [String], field: String) throws(APIError) -> [String] {
        guard raw.count <= Self.maxMembersPerRequest else {
            throw APIError.validationFailed.with(
                message: "`\(field)` may list at most \(Self.maxMembersPerRequest) users")
        }
        var seen = Set<String>()
        var ids: [String] = []
        for id in raw {
            _ = try MessagingInput.userID(id, field: field)
            if seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }
}
