import ParleyHTTP

/// Profiles. Reads stay available while privacy consent is pending (the "profile reads"); every query
/// is scoped to the caller's app, so ids of other apps are not found.
struct UserController: Sendable {
    let services: AuthServices
    static let maxLookupIDs = 100

    func register(on router: inout Router) {
        let auth = services.authenticator
        let users = services.users
        router.get(
            "/api/users/me",
            auth.protect(consent: .exempt) { _, _, principal in
                guard let user = try await users.find(appId: principal.appId, userId: principal.userId) else {
                    throw APIError.sessionEnded
                }
                return .ok(user.profile)
            })
        router.patch(
            "/api/users/me", options: AuthController.bodyLimit,
            auth.protect { request, _, principal in
                var update = try ProfileUpdate(body: request.bodyBytes)
                // Checked last: the avatar check records the new avatar, so nothing may be refused after it.
                if case .some(.some(let key)) = update.avatar {
                    update.avatar = .some(
                        try await services.avatarKey(
                            key, for: .user(principal.userId), appId: principal.appId, by: principal.userId))
                }
                return .ok(try await services.updateProfile(update, by: principal))
            })
        router.get(
            "/api/users/{id}",
            auth.protect(consent: .exempt) { _, context, principal in
                let id = try AuthInput.userID(try context.parameter("id"), field: "id")
                guard let profile = try await users.publicProfiles(appId: principal.appId, ids: [id]).first else {
                    throw APIError.notFound.with(message: "no such user")
                }
                return .ok(profile)
            })
        router.post(
            "/api/users/lookup", options: AuthController.bodyLimit,
            auth.protect(consent: .exempt) { request, _, principal in
                let body = try request.decodeJSON(LookupRequest.self)
                guard body.ids.count <= Self.maxLookupIDs else {
                    throw APIError.validationFailed.with(
                        message: "`ids` may list at most \(Self.maxLookupIDs) user ids")
                }
                for id in body.ids { _ = try AuthInput.userID(id, field: "ids") }
                let profiles = try await users.publicProfiles(appId: principal.appId, ids: body.ids)
                return .ok(["users": profiles])
            })
    }
}
