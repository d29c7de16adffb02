import Foundation
import ParleyAuth
import ParleyHTTP

/// `/api/admin/groups...`: the user group routes' operations, signed by the app's backend and acting as the app
/// (no membership needed; notify messages and events as the user routes write them, with `operatorId` `system`).
struct AdminGroupController: Sendable {
    let auth: AuthModule
    let service: GroupService

    static let bodyLimit = RouteOptions(bodyLimit: 64 * 1024)

    func register(on router: inout Router) {
        let auth = auth
        let service = service
        /// The app as the operator of a group change.
        @Sendable func operator_(_ request: HTTPRequest) async throws -> Principal {
            let app = try await auth.verifySignedRequest(request)
            return Principal(appId: app.id, userId: AdminMessageService.systemUserId, sessionId: "")
        }
        router.post("/api/admin/groups", options: Self.bodyLimit) { request, _ in
            let app = try await auth.verifySignedRequest(request)
            let body = try request.decodeJSON(AdminCreateGroupRequest.self)
            let owner = try MessagingInput.userID(body.ownerId, field: "ownerId")
            return .ok(
                try await service.create(
                    name: body.name, avatarKey: body.avatarKey, memberIds: body.members ?? [],
                    joinPolicy: body.joinPolicy, groupId: body.groupId, checkOwner: true,
                    by: Principal(appId: app.id, userId: owner, sessionId: "")), status: 201)
        }
        router.get("/api/admin/groups/{id}") { request, context in
            let app = try await auth.verifySignedRequest(request)
            let groupId = try MessagingInput.groupID(try context.parameter("id"))
            guard let group = try await service.groups.find(appId: app.id, groupId: groupId) else {
                throw APIError.groupNotFound
            }
            return .ok(group)
        }
        router.patch("/api/admin/groups/{id}", options: Self.bodyLimit) { request, context in
            let principal = try await operator_(request)
            let change = try GroupProfileChange(fields: try request.jsonObject())
            return .ok(try await service.update(try context.parameter("id"), change, by: principal, requiring: .app))
        }
        router.post("/api/admin/groups/{id}/members", options: Self.bodyLimit) { request, context in
            let principal = try await operator_(request)
            let body = try request.decodeJSON(MemberIDsRequest.self)
            return .ok(
                try await service.addMembers(
                    try context.parameter("id"), userIds: body.userIds, by: principal, requiring: .app))
        }
        router.post("/api/admin/groups/{id}/members/remove", options: Self.bodyLimit) { request, context in
            let principal = try await operator_(request)
            let body = try request.decodeJSON(MemberIDsRequest.self)
            let userIds = try service.uniqueUserIDs(body.userIds, field: "userIds")
            guard !userIds.isEmpty else {
                throw APIError.validationFailed.with(message: "`userIds` must not be empty")
            }
            return .ok(
                try await service.removeMembers(
                    try context.parameter("id"), userIds: userIds, by: principal, requiring: .app))
        }
        router.post("/api/admin/groups/{id}/transfer", options: Self.bodyLimit) { request, context in
            let principal = try await operator_(request)
            let body = try request.decodeJSON(AdminTransferRequest.self)
            return .ok(
                try await service.transfer(
                    try context.parameter("id"), to: body.ownerId, by: principal, requiring: .app))
        }
        router.post("/api/admin/groups/{id}/dissolve") { request, context in
            let principal = try await operator_(request)
            try await service.dissolve(try context.parameter("id"), by: principal, requiring: .app)
            return .ok()
        }
        router.post("/api/admin/groups/{id}/members/{userId}/mute", options: Self.bodyLimit) { request, context in
            let principal = try await operator_(request)
            let body = try request.decodeJSON(AdminMuteRequest.self, ifEmpty: AdminMuteRequest())
            return .ok(
                try await service.muteMember(
                    try context.parameter("id"), userId: try context.parameter("userId"),
                    until: try body.untilDate(), by: principal,
                    requiring: .app))
        }
        router.post("/api/admin/groups/{id}/mute-all", options: Self.bodyLimit) { request, context in
            let principal = try await operator_(request)
            let body = try request.decodeJSON(AdminMuteAllRequest.self)
            return .ok(
                try await service.muteAll(
                    try context.parameter("id"), muted: body.muted, by: principal, requiring: .app))
        }
    }
}
