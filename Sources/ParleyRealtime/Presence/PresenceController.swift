import ParleyAuth
import ParleyHTTP
import ParleyJSON

/// `POST /api/users/presence {userIds}`: the status (and last-seen time, where shown) of up to 100 users the caller
/// may see, across every instance. `GET` / `PATCH /api/users/me/presence`: whether others see the caller's
/// last-seen time.
struct PresenceController: Sendable {
    let authenticator: Authenticator
    let repository: PresenceRepository
    let hub: PresenceHub

    static let maxUsers = 100

    func register(on router: inout Router) {
        let repository = repository
        let hub = hub
        router.post(
            "/api/users/presence", options: RouteOptions(bodyLimit: 64 * 1024),
            authenticator.protect { request, _, principal in
                let body = try request.jsonObject()
                let userIds = try PresenceHub.userIDs(body["userIds"], max: Self.maxUsers, field: "userIds")
                let seeds = try await repository.seeds(
                    appId: principal.appId, viewer: principal.userId, userIds: userIds, excludingInstance: nil)
                let entries = userIds.compactMap { id -> [UInt8]? in
                    guard let seed = seeds[id] else { return nil }
                    let status = PresenceStatus.best(seed.instances.values)
                    return PresenceHub.encode(
                        .init(
                            user: .init(appId: principal.appId, userId: id), status: status,
                            lastSeen: status == .offline && !seed.hidesLastSeen ? seed.lastSeen : nil))
                }
                return .ok(json: PresenceHub.usersJSON(entries))
            })
        router.get(
            "/api/users/me/presence",
            authenticator.protect { _, _, principal in
                .ok(
                    Settings(
                        showLastSeen: try await repository.showsLastSeen(
                            appId: principal.appId, userId: principal.userId)))
            })
        router.patch(
            "/api/users/me/presence", options: RouteOptions(bodyLimit: 4 * 1024),
            authenticator.protect { request, _, principal in
                let settings = try request.decodeJSON(Settings.self)
                try await repository.setShowsLastSeen(
                    settings.showLastSeen, appId: principal.appId, userId: principal.userId)
                hub.lastSeenVisibilityChanged(
                    appId: principal.appId, userId: principal.userId, hidden: !settings.showLastSeen)
                return .ok(settings)
            })
    }

    struct Settings: Codable, Sendable {
        var showLastSeen: Bool
    }
}
