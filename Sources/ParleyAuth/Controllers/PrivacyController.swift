import Foundation
import ParleyHTTP

/// The app's privacy-policy version and the user's consent (the way out of 1033).
struct PrivacyController: Sendable {
    let services: AuthServices

    struct PrivacyStatus: Encodable {
        /// The app's current policy version.
        var version: Int
        /// The version the user accepted.
        var consentedVersion: Int
        var consentRequired: Bool
    }

    struct ConsentResult: Encodable {
        var version: Int
        /// A new access token carrying the consent, so that later calls need no consent lookup.
        var accessToken: String
        var accessTokenExpiresAt: Date
    }

    func register(on router: inout Router) {
        router.get(
            "/api/privacy",
            services.authenticator.protect(consent: .exempt) { request, _, principal in
                try await status(request, principal)
            })
        router.post("/api/privacy/consent", options: AuthController.bodyLimit) { request, _ in
            try await consent(request)
        }
    }

    func status(_ request: HTTPRequest, _ principal: Principal) async throws -> HTTPResponse {
        guard let app = try await services.apps.app(id: principal.appId),
            let accepted = try await services.users.consentedVersion(appId: principal.appId, userId: principal.userId)
        else { throw APIError.sessionEnded }
        return .ok(
            PrivacyStatus(
                version: app.privacyVersion, consentedVersion: accepted,
                consentRequired: accepted < app.privacyVersion))
    }

    func consent(_ request: HTTPRequest) async throws -> HTTPResponse {
        let verified = try await services.authenticator.authenticate(request, audience: .api, consent: .exempt)
        let principal = verified.principal
        let body = try request.decodeJSON(ConsentRequest.self)
        let current = verified.app.privacyVersion
        // Consent is to the policy in force: an old version (a stale client) or a future one is refused.
        guard body.version == current else {
            throw APIError.validationFailed.with(message: "`version` must be the current privacy version \(current)")
        }
        guard
            let recorded = try await services.users.recordConsent(
                appId: principal.appId, userId: principal.userId,
                version: current)
        else {
            throw APIError.sessionEnded
        }
        services.consents.record(appId: principal.appId, userId: principal.userId, version: recorded)
        let lifetime = services.sessions.lifetimes(verified.app).access
        let access = try services.sessions.tokens.issue(
            .api, for: principal, consentedVersion: recorded, lifetime: lifetime)
        return .ok(ConsentResult(version: recorded, accessToken: access.token, accessTokenExpiresAt: access.expiresAt))
    }
}
