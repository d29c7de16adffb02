import Foundation
import ParleyAuth
import ParleyHTTP

/// `/api/im/groups...`: create, list, search, read, update, dissolve, members, leave, transfer, mutes, joining.
struct GroupController: Sendable {
    let authenticator: Authenticator
    let service: GroupService

    static let bodyLimit = RouteOptions(bodyLimit: 64 * 1024)

    func register(on router: inout Router) {
        let service = service
        router.post(
            "/api/im/groups", options: Self.bodyLimit,
            authenticator.protect { request, _, principal in
                let body = try request.decodeJSON(CreateGroupRequest.self)
                return .ok(
                    try await service.create(
                        name: body.name, avatarKey: body.avatarKey, memberIds: body.memberIds,
                        joinPolicy: body.joinPolicy, by: principal), status: 201)
            })
        router.get(
            "/api/im/groups",
            authenticator.protect { request, _, principal in
                let query = request.query
                return .ok(
                    try await service.myGroups(
                        after: try query.value(for: "cursor").map { raw throws(APIError) in
                            try MessagingInput.groupID(String(raw), field: "cursor")
                        },
                        limit: try query.limit(defaultLimit: 100, max: 500), for: principal))
            })
        // A literal segment wins over `{id}`: a group cannot be called `search` (`GroupService.reservedGroupIDs`).
        router.get(
            "/api/im/groups/search",
            authenticator.protect { request, _, principal in
                let paging = try Paging(request, defaultLimit: 20, maxLimit: 50)
                return .ok(
                    try await service.searchGroups(
                        try request.query.value(for: "q").map(String.init), offset: paging.offset,
                        limit: paging.limit, for: principal))
            })
        router.get(
            "/api/im/groups/{id}",
            authenticator.protect { _, context, principal in
                .ok(try await service.info(try MessagingInput.groupID(try context.parameter("id")), for: principal))
            })
        router.patch(
            "/api/im/groups/{id}", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let change = try GroupProfileChange(fields: try request.jsonObject())
                return .ok(try await service.update(try context.parameter("id"), change, by: principal))
            })
        router.delete(
            "/api/im/groups/{id}",
            authenticator.protect { _, context, principal in
                try await service.dissolve(try context.parameter("id"), by: principal)
                return .ok()
            })
        router.get(
            "/api/im/groups/{id}/members",
            authenticator.protect { request, context, principal in
                let paging = try Paging(request, defaultLimit: 200, maxLimit: 500)
                var cursor: MemberCursor?
                if let raw = try request.query.value(for: "cursor") {
                    guard let parsed = MemberCursor(raw) else {
                        throw APIError.validationFailed.with(message: "`cursor` is not a cursor of this list")
                    }
                    cursor = parsed
                }
                return .ok(
                    try await service.members(
                        try MessagingInput.groupID(try context.parameter("id")), after: cursor,
                        offset: paging.offset, limit: paging.limit, for: principal))
            })
        router.post(
            "/api/im/groups/{id}/members", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let body = try request.decodeJSON(MemberIDsRequest.self)
                return .ok(
                    try await service.addMembers(try context.parameter("id"), userIds: body.userIds, by: principal))
            })
        router.delete(
            "/api/im/groups/{id}/members/{userId}",
            authenticator.protect { _, context, principal in
                .ok(
                    try await service.removeMember(
                        try context.parameter("id"), userId: try context.parameter("userId"),
                        by: principal))
            })
        router.patch(
            "/api/im/groups/{id}/members/{userId}", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let body = try request.decodeJSON(UpdateMemberRequest.self)
                return .ok(
                    try await service.updateMember(
                        try context.parameter("id"), userId: try context.parameter("userId"),
                        role: body.role, blocked: body.blocked, by: principal))
            })
        router.post(
            "/api/im/groups/{id}/leave",
            authenticator.protect { _, context, principal in
                try await service.leave(try context.parameter("id"), by: principal)
                return .ok()
            })
        router.post(
            "/api/im/groups/{id}/transfer", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let body = try request.decodeJSON(TransferRequest.self)
                return .ok(try await service.transfer(try context.parameter("id"), to: body.userId, by: principal))
            })
        registerJoining(on: &router)
        // Mutes (owners and admins over members they outrank): `until` epoch milliseconds, absent or null unmutes.
        router.post(
            "/api/im/groups/{id}/members/{userId}/mute", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let body =
                    try request.decodeJSON(AdminMuteRequest.self, ifEmpty: AdminMuteRequest())
                return .ok(
                    try await service.muteMember(
                        try context.parameter("id"), userId: try context.parameter("userId"),
                        until: try body.untilDate(), by: principal))
            })
        router.post(
            "/api/im/groups/{id}/mute-all", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let body = try request.decodeJSON(AdminMuteAllRequest.self)
                return .ok(try await service.muteAll(try context.parameter("id"), muted: body.muted, by: principal))
            })
    }
}

extension GroupController {
    /// Joining by oneself, the join requests owners and admins handle, and bans.
    func registerJoining(on router: inout Router) {
        let service = service
        router.post(
            "/api/im/groups/{id}/join", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let body = try request.decodeJSON(JoinRequestBody.self, ifEmpty: JoinRequestBody())
                return .ok(try await service.join(try context.parameter("id"), message: body.message, by: principal))
            })
        router.get(
            "/api/im/groups/{id}/join-requests",
            authenticator.protect { request, context, principal in
                let paging = try Paging(request, defaultLimit: 50, maxLimit: 200)
                return .ok(
                    try await service.joinRequests(
                        try context.parameter("id"), offset: paging.offset, limit: paging.limit, for: principal))
            })
        router.get(
            "/api/im/groups/{id}/bans",
            authenticator.protect { request, context, principal in
                let paging = try Paging(request, defaultLimit: 50, maxLimit: 200)
                return .ok(
                    try await service.bans(
                        try context.parameter("id"), offset: paging.offset, limit: paging.limit, for: principal))
            })
        router.put(
            "/api/im/groups/{id}/bans/{userId}",
            authenticator.protect { _, context, principal in
                .ok(
                    try await service.ban(
                        try context.parameter("id"), userId: try context.parameter("userId"), by: principal))
            })
        router.delete(
            "/api/im/groups/{id}/bans/{userId}",
            authenticator.protect { _, context, principal in
                let userId = try context.parameter("userId")
                try await service.unban(try context.parameter("id"), userId: userId, by: principal)
                return .ok(GroupUnban(userId: userId, banned: false))
            })
        for (action, accept) in [("accept", true), ("reject", false)] {
            router.post(
                "/api/im/groups/{id}/join-requests/{userId}/\(action)",
                authenticator.protect { _, context, principal in
                    .ok(
                        try await service.handleJoinRequest(
                            try context.parameter("id"), userId: try context.parameter("userId"), accept: accept,
                            by: principal))
                })
        }
    }
}
