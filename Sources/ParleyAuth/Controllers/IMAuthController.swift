import ParleyHTTP

/// IM tokens: the signed login of an app's own backend (apps with their own user base) and the silent renewal
/// for a logged-in client.
struct IMAuthController: Sendable {
    let services: AuthServices

    func register(on router: inout Router) {
        router.post("/api/im/auth/login", options: AuthController.bodyLimit) { request, _ in
            try await signedLogin(request)
        }
        router.post("/api/im/auth/token") { request, _ in
            try await renew(request)
        }
    }

    /// `{appKey, userId, platform?, deviceId?, deviceModel?, language?}`, signed; creates the user on first use and
    /// renews the device's signed session when it has one.
    func signedLogin(_ request: HTTPRequest) async throws -> HTTPResponse {
        let address = try services.limits.admit(request)
        let app = try await services.signatures.verify(request)
        let body = try request.decodeJSON(IMLoginRequest.self)
        guard body.appKey == app.appKey else {
            throw APIError.forbidden.with(message: "`appKey` in the body differs from the signed X-App-Key")
        }
        let userId = try AuthInput.newUserID(body.userId)
        let device = try AuthInput.device(
            platform: body.platform, deviceId: body.deviceId,
            deviceModel: body.deviceModel, ipAddress: address,
            language: try AuthInput.language(body.language, of: request), defaultPlatform: "unknown")
        try services.limits.admit(account: "id:" + userId, appId: app.id)
        let answer = try await services.sessions.externalLogin(app: app, userId: userId, device: device)
        services.logger.info(
            "signed login",
            [
                "app_id": .int(Int(app.id)), "user_id": .string(userId),
                "platform": .string(device.platform), "renewed": .bool(answer.renewed),
            ])
        return .ok(answer)
    }

    /// A fresh IM token for the session of the access token presented, expiring with the session's refresh token
    /// at the latest. The token is checked before the address's bucket, so a call without valid credentials
    /// answers 401 and spends none of its tokens.
    func renew(_ request: HTTPRequest) async throws -> HTTPResponse {
        let verified = try await services.authenticator.authenticate(request, audience: .api, consent: .required)
        let address = try services.limits.admit(request)
        let principal = verified.principal
        try services.limits.admit(account: "id:" + principal.userId, appId: principal.appId)
        // Consent was just checked against the app's current version.
        let version = max(verified.claims.pv, verified.app.privacyVersion)
        let im = try await services.sessions.issueWithinSession(
            .im, app: verified.app, principal: principal, consentedVersion: version,
            lifetime: services.sessions.lifetimes(verified.app).im, ipAddress: address)
        return .ok(IMTokenResponse(token: im.token, expiresAt: im.expiresAt))
    }
}
