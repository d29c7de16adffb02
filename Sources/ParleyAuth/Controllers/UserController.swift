import ParleyCrypto
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
        // Deleting the account works while consent is pending (Apple 5.1.1(v): deletion must always be reachable).
        router.delete(
            "/api/users/me", options: AuthController.bodyLimit,
            auth.protect(consent: .exempt) { request, _, principal in
                try await deleteAccount(request, principal: principal)
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

    /// `DELETE /api/users/me`: a built-in account proves it is its owner with its password, which counts toward the
    /// failed-login throttles as a login from the caller's address does (a stolen token must not buy unthrottled
    /// guesses); a wrong one answers as a wrong login does (1035). Accounts the app's backend created have no
    /// password: their backend deletes them (1047).
    func deleteAccount(_ request: HTTPRequest, principal: Principal) async throws -> HTTPResponse {
        let address = try services.limits.admit(request)
        guard let user = try await services.users.find(appId: principal.appId, userId: principal.userId),
            user.deletedAt == nil
        else {
            throw APIError.sessionEnded
        }
        guard let stored = user.passwordHash else { throw APIError.accountManagedByApp }
        let body = try request.decodeJSON(DeleteAccountRequest.self)
        guard let password = body.password else {
            throw APIError.validationFailed.with(message: "`password` is required")
        }
        guard password.utf8.count <= AuthInput.maxPasswordBytes else { throw APIError.invalidCredentials }
        let username = user.profile.username ?? ""
        try services.limits.admit(account: username, appId: principal.appId)
        let sources = LoginSource.of(address: address, deviceId: "", knownDevice: false)
        if let wait = try await services.throttles.attempt(
            appId: principal.appId, username: username, sources: sources,
            allowance: services.configuration.maxLoginFailures,
            firstDelaySeconds: services.configuration.loginFirstDelay,
            windowSeconds: services.configuration.loginFailureWindow,
            maxDelaySeconds: services.configuration.loginFailureWindow)
        {
            throw APIError.loginThrottled(retryAfterSeconds: wait)
        }
        guard try await services.passwords.run({ PasswordHasher.verify(password: password, encoded: stored) }) else {
            services.logger.info(
                "account deletion refused: wrong password",
                ["app_id": .int(Int(principal.appId)), "user_id": .string(principal.userId)])
            throw APIError.invalidCredentials
        }
        try await services.throttles.succeeded(appId: principal.appId, username: username, sources: sources)
        guard let deletion = services.deletion else { throw APIError.internalError }
        _ = try await deletion.delete(appId: principal.appId, userId: principal.userId)
        return .ok()
    }
}
