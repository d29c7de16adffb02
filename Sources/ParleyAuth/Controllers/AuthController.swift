import Foundation
import ParleyCrypto
import ParleyHTTP

/// Built-in accounts: register, login, refresh. Clients name their app with `X-App-Key`.
struct AuthController: Sendable {
    let services: AuthServices

    /// Bodies here are small JSON objects; a tight limit keeps floods of large bodies cheap to refuse.
    static let bodyLimit = RouteOptions(bodyLimit: 16 * 1024)

    func register(on router: inout Router) {
        router.post("/api/auth/register", options: Self.bodyLimit) { request, _ in
            try await register(request)
        }
        router.post("/api/auth/login", options: Self.bodyLimit) { request, _ in
            try await login(request)
        }
        router.post("/api/auth/refresh", options: Self.bodyLimit) { request, _ in
            try await refresh(request)
        }
    }

    func register(_ request: HTTPRequest) async throws -> HTTPResponse {
        let address = try services.limits.admit(request)
        let app = try await services.apps.requireApp(of: request)
        let body = try request.decodeJSON(RegisterRequest.self)
        let username = try AuthInput.username(body.username)
        try AuthInput.newPassword(body.password)
        let nickname = try AuthInput.nickname(body.nickname) ?? body.username
        _ = try AuthInput.avatar(body.avatar)
        let device = try AuthInput.device(
            platform: body.platform, deviceId: body.deviceId,
            deviceModel: body.deviceModel, ipAddress: address,
            language: SessionLanguage(acceptLanguage: request.headers["accept-language"]), defaultPlatform: "unknown")
        try services.limits.admit(account: username, appId: app.id)
        // Counted before the password is hashed: the hash is the expensive part a flood would buy.
        if services.configuration.registrationsPerHour > 0,
            let wait = try await services.registrations.attempt(
                appId: app.id, source: TrustedProxies.rateLimitKey(for: address),
                perHour: services.configuration.registrationsPerHour)
        {
            services.refusals.count(.registration)
            throw APIError.registrationsThrottled(retryAfterSeconds: wait)
        }
        // The new account may use only files every user of the app may read (other profiles' avatars); its id is
        // chosen first so that the avatar record names it.
        let userId = Identifiers.newUserID()
        var avatar: String?
        if let raw = body.avatar {
            avatar = try await services.avatarKey(raw, for: .user(userId), appId: app.id, by: userId)
        }
        let password = body.password
        let parameters = services.configuration.passwordParameters
        guard
            let hash = try await services.passwords.run({
                try? PasswordHasher.hash(password: password, parameters: parameters)
            })
        else { throw APIError.internalError }
        let tokens = try await services.sessions.register(
            app: app, userId: userId, username: username, passwordHash: hash,
            nickname: nickname, avatar: avatar, device: device)
        services.logger.info("user registered", ["app_id": .int(Int(app.id)), "user_id": .string(tokens.user.id)])
        return .ok(tokens)
    }

    func login(_ request: HTTPRequest) async throws -> HTTPResponse {
        let address = try services.limits.admit(request)
        let app = try await services.apps.requireApp(of: request)
        let body = try request.decodeJSON(LoginRequest.self)
        let device = try AuthInput.device(
            platform: body.platform, deviceId: body.deviceId,
            deviceModel: body.deviceModel, ipAddress: address,
            language: SessionLanguage(acceptLanguage: request.headers["accept-language"]))
        // A malformed username cannot exist: still answer 1035 (after the same work) so nothing is revealed.
        let username = Validation.normalizedUsername(body.username) ?? ""
        guard body.password.utf8.count <= AuthInput.maxPasswordBytes else { throw APIError.invalidCredentials }
        try services.limits.admit(account: username, appId: app.id)

        let candidate = try await services.users.loginCandidate(
            appId: app.id, username: username, deviceId: device.deviceId)
        // Counted before the password is checked (a success takes it back), whether or not the account exists.
        let sources = LoginSource.of(address: address, deviceId: device.deviceId, knownDevice: candidate.knownDevice)
        if let wait = try await services.throttles.attempt(
            appId: app.id, username: username, sources: sources,
            allowance: services.configuration.maxLoginFailures,
            firstDelaySeconds: services.configuration.loginFirstDelay,
            windowSeconds: services.configuration.loginFailureWindow,
            maxDelaySeconds: services.configuration.loginFailureWindow)
        {
            throw APIError.loginThrottled(retryAfterSeconds: wait)
        }
        let stored = candidate.user?.passwordHash
        let encoded = stored ?? services.dummyHash.encoded
        let password = body.password
        let matches = try await services.passwords.run { PasswordHasher.verify(password: password, encoded: encoded) }
        // A deleted account has no password left to check; its username is reserved (registering it answers 1040), so
        // saying so reveals nothing more.
        if candidate.user?.deletedAt != nil { throw APIError.accountDeleted }
        guard matches, stored != nil, !username.isEmpty, let user = candidate.user else {
            services.logger.info(
                "login failed", ["app_id": .int(Int(app.id)), "known_device": .bool(candidate.knownDevice)])
            throw APIError.invalidCredentials
        }
        try await services.throttles.succeeded(appId: app.id, username: username, sources: sources)
        let tokens = try await services.sessions.login(app: app, userId: user.profile.id, device: device)
        services.logger.info(
            "login",
            [
                "app_id": .int(Int(app.id)), "user_id": .string(user.profile.id),
                "session_id": .string(tokens.sessionId), "platform": .string(device.platform),
            ])
        return .ok(tokens)
    }

    func refresh(_ request: HTTPRequest) async throws -> HTTPResponse {
        let address = try services.limits.admit(request)
        // The app comes from the token; an X-App-Key, when sent, must name it (else the token is "unknown").
        var app: AppSettings?
        if request.headers["x-app-key"] != nil { app = try await services.apps.requireApp(of: request) }
        let body = try request.decodeJSON(RefreshRequest.self)
        let tokens = try await services.sessions.refresh(
            app: app, apps: services.apps, refreshToken: body.refreshToken,
            ipAddress: address)
        return .ok(tokens)
    }
}
