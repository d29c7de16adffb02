import ParleyAuth
import ParleyHTTP
import ParleyJSON

/// The rooms' REST routes: users create, look at, read the recent history of, and dismiss (their own) rooms; the
/// app's backend creates and dismisses any room of its app with signed calls. Entering, leaving and sending are
/// WebSocket frames (Gateway).
struct RoomController: Sendable {
    let auth: AuthModule
    let rooms: RoomService

    static let options = RouteOptions(bodyLimit: 16 * 1024)

    func register(on router: inout Router) {
        let rooms = rooms
        let auth = auth
        let authenticator = auth.authenticator
        router.post(
            "/api/im/rooms", options: Self.options,
            authenticator.protect { request, _, principal in
                let body = try RoomCreateRequest(try HTTPRequest.jsonObject(request.bodyBytes), allowsCreator: false)
                return .ok(
                    RoomInfo(
                        room: try await rooms.create(appId: principal.appId, body, creatorId: principal.userId),
                        online: 0), status: 201)
            })
        router.get(
            "/api/im/rooms/{id}",
            authenticator.protect { _, context, principal in
                .ok(try await rooms.info(try Self.key(context, principal.appId)))
            })
        router.get(
            "/api/im/rooms/{id}/messages",
            authenticator.protect { request, context, principal in
                let query = try RoomHistoryQuery(request.query)
                return .ok(try await rooms.history(try Self.key(context, principal.appId), query))
            })
        router.delete(
            "/api/im/rooms/{id}",
            authenticator.protect { _, context, principal in
                let key = try Self.key(context, principal.appId)
                try await rooms.dismiss(key, byUser: principal.userId)
                return .ok(Self.dismissed(key))
            })
        router.post("/api/admin/rooms", options: Self.options) { request, _ in
            let app = try await auth.verifySignedRequest(request)
            let body = try RoomCreateRequest(try HTTPRequest.jsonObject(request.bodyBytes), allowsCreator: true)
            return .ok(
                RoomInfo(room: try await rooms.create(appId: app.id, body, creatorId: body.creatorId), online: 0),
                status: 201)
        }
        router.delete("/api/admin/rooms/{id}") { request, context in
            let app = try await auth.verifySignedRequest(request)
            let key = RoomKey(appId: app.id, roomId: try RoomID.parse(try context.parameter("id"), field: "id"))
            try await rooms.dismiss(key, byUser: nil)
            return .ok(Self.dismissed(key))
        }
    }

    private static func key(_ context: RequestContext, _ appId: Int64) throws(APIError) -> RoomKey {
        RoomKey(appId: appId, roomId: try RoomID.parse(try context.parameter("id"), field: "id"))
    }

    private static func dismissed(_ key: RoomKey) -> JSONValue {
        .object(JSONObject([("roomId", .string(String(key.roomId))), ("dismissed", true)]))
    }
}
