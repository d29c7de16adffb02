import Foundation
import ParleyCrypto
import ParleyHTTPClient
import ParleyObservability

/// Sends pushes through HMS Push Kit: an access token from Huawei's OAuth 2.0 endpoint for the app's client
/// credentials (`POST {oauth}/oauth2/v3/token`), cached per app until shortly before it expires, then
/// `POST {endpoint}/v1/{appId}/messages:send`. An answer refusing the token (80200003 expired, 80200001, 401)
/// renews it and sends once more.
public final class HMSSender: Sendable {
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

    public func send(_ notification: PushNotification, credentials: HMSCredentials) async -> PushOutcome {
        let url = "\(credentials.endpoint)/v1/\(credentials.clientId)/messages:send"
        let body = HMSMessage.body(for: notification, now: now())
        // The secret is part of the key, hashed: a new secret gets a new token, and no secret sits in the cache.
        let key = OAuthAccessTokens.Key(
            vendor: .hms, appId: credentials.appId,
            client: "\(credentials.clientId) \(credentials.oauthEndpoint) "
                + Hex.encode(SHA256.hash(Array(credentials.clientSecret.utf8))))
        let outcome = { (response: HTTPClientResponse) in
            HMSMessage.outcome(status: response.status, body: response.body, token: notification.token)
        }
        return await OAuthPush(client: client, tokens: tokens, timeout: timeout).send(
            body, to: url, key: key, vendor: "HMS", fetch: { [self] in try await fetchToken(credentials) },
            refused: { HMSMessage.refusesAccessToken(status: $0.status, body: $0.body) }, outcome: outcome,
            exhausted: outcome)
    }

    func fetchToken(_ credentials: HMSCredentials) async throws -> OAuthAccessToken {
        try await OAuthTokenRequest.fetch(
            client: client, url: "\(credentials.oauthEndpoint)/oauth2/v3/token",
            form: [
                ("grant_type", "client_credentials"), ("client_id", credentials.clientId),
                ("client_secret", credentials.clientSecret),
            ],
            timeout: timeout)
    }
}
