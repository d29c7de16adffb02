import Foundation
import ParleyCrypto
import ParleyHTTPClient
import ParleyObservability

/// Sends pushes through Firebase Cloud Messaging's HTTP v1 API: `POST {endpoint}/v1/projects/{project}/messages:send`
/// with `authorization: Bearer <access token>`. Access tokens come from the service account's OAuth 2.0 token
/// endpoint for an RS256 assertion (RFC 7523) and are cached per app until shortly before they expire; a 401
/// renews the token and sends once more.
public final class FCMSender: Sendable {
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    static let assertionLifetimeSeconds = 3600

    let client: HTTPClient
    let tokens: OAuthAccessTokens
    let timeout: Duration
    let logger: Logger
    let now: @Sendable () -> Int

    public convenience init(client: HTTPClient, timeout: Duration = .seconds(10), logger: Logger) {
        self.init(client: client, timeout: timeout, logger: logger, now: { Int(Date().timeIntervalSince1970) })
    }

    init(client: HTTPClient, timeout: Duration, logger: Logger, now: @escaping @Sendable () -> Int) {
        self.client = client
        self.timeout = timeout
        self.logger = logger
        self.now = now
        tokens = OAuthAccessTokens(now: now)
    }

    public func send(_ notification: PushNotification, credentials: FCMCredentials) async -> PushOutcome {
        let url = "\(credentials.endpoint)/v1/projects/\(credentials.account.projectId)/messages:send"
        let body = FCMMessage.body(for: notification, now: now())
        let key = OAuthAccessTokens.Key(
            vendor: .fcm, appId: credentials.appId,
            client:
                "\(credentials.account.clientEmail) \(credentials.account.privateKeyId ?? "") \(credentials.tokenURI)")
        return await OAuthPush(client: client, tokens: tokens, timeout: timeout).send(
            body, to: url, key: key, vendor: "FCM", fetch: { [self] in try await fetchToken(credentials) },
            refused: { $0.status == 401 }, outcome: { FCMMessage.outcome(status: $0.status, body: $0.body) },
            exhausted: { _ in .retry(reason: "UNAUTHENTICATED") })
    }

    private struct Claims: Encodable {
        var iss: String
        var scope: String
        var aud: String
        var iat: Int
        var exp: Int
    }

    /// Exchanges a fresh assertion for an access token (Google's "Using OAuth 2.0 for Server to Server
    /// Applications").
    func fetchToken(_ credentials: FCMCredentials) async throws -> OAuthAccessToken {
        let account = credentials.account
        let issuedAt = now()
        var header: [String: String] = [:]
        if let kid = account.privateKeyId { header["kid"] = kid }
        let assertion = try JWT.signRS256(
            header: header,
            claims: Claims(
                iss: account.clientEmail, scope: Self.scope, aud: account.tokenURI, iat: issuedAt,
                exp: issuedAt + Self.assertionLifetimeSeconds),
            key: account.key)
        return try await OAuthTokenRequest.fetch(
            client: client, url: credentials.tokenURI,
            form: [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", assertion)],
            timeout: timeout)
    }
}
