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
        /// A new access token carrying the consent, so that later calls need no consent lookup: only when the
        /// presented token predates the policy (consent was pending), expiring with the session's refresh token at
        /// the latest. Null otherwise: consent is no way to renew a token.
        var accessToken: String?
        var accessTokenExpiresAt: Date?

        enum CodingKeys: String, CodingKey { case version, accessToken, accessTokenExpiresAt }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(version, forKey: .version)
            try container.encode(accessToken, forKey: .accessToken)
            try container.encode(accessTokenExpiresAt, forKey: .accessTokenExpiresAt)
        }
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
        guard verified.claims.pv < current else {
            return .ok(ConsentResult(version: recorded, accessToken: nil, accessTokenExpiresAt: nil))
        }
        let access = try await services.sessions.issueWithinSession(
            .api, app: verified.app, principal: principal, consentedVersion: recorded,
            lifetime: services.sessions.lifetimes(verified.app).access,
            ipAddress: services.limits.clientAddress(of: request))
        return .ok(ConsentResult(version: recorded, accessToken: access.token, accessTokenExpiresAt: access.expiresAt))
    }
}
