import ParleyAuth
import ParleyHTTP

/// Push-token routes: `POST /api/push/tokens`, `DELETE /api/push/tokens/{token}`, and the OpenIM-style aliases
/// `POST /user/device/push-token` and `POST /user/device/push-token/unbind`.
struct PushTokenController: Sendable {
    let authenticator: Authenticator
    let tokens: PushTokenRepository
    let settings: PushSettingsRepository

    static let bodyLimit = RouteOptions(bodyLimit: 16 * 1024)

    func register(on router: inout Router) {
        let tokens = tokens
        let settings = settings
        router.post(
            "/api/push/tokens", options: Self.bodyLimit,
            authenticator.protect { request, _, principal in
                let body = try request.decodeJSON(BindTokenRequest.self)
                let binding = try PushTokenInput.binding(
                    token: body.token, vendor: body.vendor, deviceId: body.deviceId,
                    bundleId: body.bundleId, environment: body.environment)
                return .ok(
                    try await Self.bind(binding, principal: principal, tokens: tokens, settings: settings),
                    status: 201)
            })
        // Unbinding works without fresh privacy consent (a client may unbind before showing the new policy).
        router.delete(
            "/api/push/tokens/{token}",
            authenticator.protect(consent: .exempt) { _, context, principal in
                let token = try PushTokenInput.lookupToken(try context.parameter("token"))
                let removed = try await tokens.unbind(appId: principal.appId, userId: principal.userId, token: token)
                guard removed > 0 else { throw APIError.pushTokenNotFound }
                return .ok(UnbindResult(removed: removed))
            })
        router.post(
            "/user/device/push-token", options: Self.bodyLimit,
            authenticator.protect { request, _, principal in
                let body = try request.decodeJSON(LegacyBindRequest.self)
                // `uid` is the app's own id for the user (seed 000 sends `12345` for the IM user `tb_12345`): it is
                // recorded with the token, and the token binds to the caller whatever it says.
                var binding = try PushTokenInput.binding(
                    token: body.token,
                    vendor: try PushTokenInput.legacyVendor(body.type).rawValue,
                    deviceId: body.deviceId, bundleId: body.bundleId,
                    environment: body.environment)
                binding.appUid = try PushTokenInput.appUID(body.uid)
                return .ok(
                    try await Self.bind(binding, principal: principal, tokens: tokens, settings: settings),
                    status: 201)
            })
        // Called at logout: unbinding nothing is not an error.
        router.post(
            "/user/device/push-token/unbind", options: Self.bodyLimit,
            authenticator.protect(consent: .exempt) { request, _, principal in
                let body =
                    request.bodyBytes.isEmpty
                    ? LegacyUnbindRequest(uid: nil, token: nil, type: nil)
                    : try request.decodeJSON(LegacyUnbindRequest.self)
                // `uid` (the app's own id for the user) is accepted as sent: only the caller's tokens are removed.
                let removed: Int
                if let token = body.token {
                    let vendor = try body.type.map { raw throws(APIError) in try PushTokenInput.legacyVendor(raw) }
                    removed = try await tokens.unbind(
                        appId: principal.appId, userId: principal.userId,
                        token: try PushTokenInput.lookupToken(token), vendor: vendor)
                } else {
                    removed = try await tokens.unbind(appId: principal.appId, sessionId: principal.sessionId)
                }
                return .ok(UnbindResult(removed: removed))
            })
    }

    static func bind(
        _ binding: PushTokenRepository.Binding, principal: Principal, tokens: PushTokenRepository,
        settings: PushSettingsRepository
    ) async throws -> BoundToken {
        if let configured = try await settings.settings(appId: principal.appId)?.bundleId {
            try PushTokenInput.requireAppBundle(binding, configured: configured)
        }
        guard
            try await tokens.bind(
                binding, appId: principal.appId, userId: principal.userId, sessionId: principal.sessionId)
        else { throw APIError.pushTokenHeld }
        return BoundToken(
            token: binding.token, vendor: binding.vendor.rawValue, deviceId: binding.deviceId,
            bundleId: binding.bundleId, environment: binding.environment.rawValue)
    }
}
