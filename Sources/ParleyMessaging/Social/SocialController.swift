import ParleyAuth
import ParleyHTTP
import ParleyJSON

/// `/api/im/friends...` and `/api/im/blocks...`: friend requests, the friend list, remarks, blocks.
struct SocialController: Sendable {
    let authenticator: Authenticator
    let friends: FriendService
    let blocks: BlockService

    static let bodyLimit = RouteOptions(bodyLimit: 16 * 1024)

    func register(on router: inout Router) {
        registerRequests(on: &router)
        registerFriends(on: &router)
        registerBlocks(on: &router)
    }

    private func registerRequests(on router: inout Router) {
        let friends = friends
        router.post(
            "/api/im/friends/requests", options: Self.bodyLimit,
            authenticator.protect { request, _, principal in
                let body = try request.decodeJSON(FriendRequestBody.self)
                return .ok(
                    try await friends.sendRequest(to: body.userId, message: body.message, by: principal), status: 201)
            })
        router.get(
            "/api/im/friends/requests",
            authenticator.protect { request, _, principal in
                let query = request.query
                let incoming: Bool
                switch try query.value(for: "direction") {
                case nil, "incoming": incoming = true
                case "outgoing": incoming = false
                default: throw APIError.validationFailed.with(message: "`direction` must be incoming or outgoing")
                }
                let pendingOnly: Bool
                switch try query.value(for: "status") {
                case nil, "pending": pendingOnly = true
                case "all": pendingOnly = false
                default: throw APIError.validationFailed.with(message: "`status` must be pending or all")
                }
                return .ok(
                    try await friends.requests(
                        incoming: incoming, pendingOnly: pendingOnly,
                        cursor: try query.value(for: "cursor").map(String.init),
                        limit: try query.limit(defaultLimit: 50, max: 200), for: principal))
            })
        router.post(
            "/api/im/friends/requests/{id}/accept", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let body = try request.decodeJSON(AcceptBody.self, ifEmpty: AcceptBody())
                return .ok(try await friends.accept(try context.parameter("id"), remark: body.remark, by: principal))
            })
        router.post(
            "/api/im/friends/requests/{id}/reject",
            authenticator.protect { _, context, principal in
                .ok(try await friends.reject(try context.parameter("id"), by: principal))
            })
        router.delete(
            "/api/im/friends/requests/{id}",
            authenticator.protect { _, context, principal in
                .ok(try await friends.withdraw(try context.parameter("id"), by: principal))
            })
    }

    private func registerFriends(on router: inout Router) {
        let friends = friends
        router.get(
            "/api/im/friends",
            authenticator.protect { request, _, principal in
                let query = request.query
                return .ok(
                    try await friends.friends(
                        since: try query.value(for: "since").map(String.init),
                        limit: try query.limit(
                            defaultLimit: FriendService.defaultPageSize, max: FriendService.maxPageSize),
                        for: principal))
            })
        router.patch(
            "/api/im/friends/{userId}", options: Self.bodyLimit,
            authenticator.protect { request, context, principal in
                let body = try request.decodeJSON(RemarkBody.self)
                return .ok(
                    try await friends.setRemark(try context.parameter("userId"), remark: body.remark, by: principal))
            })
        router.delete(
            "/api/im/friends/{userId}",
            authenticator.protect { _, context, principal in
                let userId = try context.parameter("userId")
                try await friends.remove(userId, by: principal)
                return .ok(["userId": userId])
            })
    }

    private func registerBlocks(on router: inout Router) {
        let blocks = blocks
        router.get(
            "/api/im/blocks",
            authenticator.protect { request, _, principal in
                let query = request.query
                return .ok(
                    try await blocks.blocks(
                        cursor: try query.value(for: "cursor").map(String.init),
                        limit: try query.limit(
                            defaultLimit: BlockService.defaultPageSize, max: BlockService.maxPageSize),
                        for: principal))
            })
        router.put(
            "/api/im/blocks/{userId}",
            authenticator.protect { _, context, principal in
                let (entry, created) = try await blocks.block(try context.parameter("userId"), by: principal)
                return .ok(entry, status: created ? 201 : 200)
            })
        router.delete(
            "/api/im/blocks/{userId}",
            authenticator.protect { _, context, principal in
                let userId = try context.parameter("userId")
                let unblocked = try await blocks.unblock(userId, by: principal)
                return .ok(UnblockResult(userId: userId, unblocked: unblocked))
            })
    }
}

struct FriendRequestBody: Decodable {
    var userId: String
    var message: String?
}

struct AcceptBody: Decodable {
    var remark: String?
}

struct RemarkBody: Decodable {
    var remark: String
}

struct UnblockResult: Encodable {
    var userId: String
    /// False when the user was not blocked (nothing changed).
    var unblocked: Bool
}
