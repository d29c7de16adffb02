import Foundation
import ParleyHTTPClient
import ParleyJSON
import ParleyObservability

/// Sends pushes through Apple's HTTP/2 provider API: `POST {endpoint}/3/device/{token}` with `apns-topic`,
/// `apns-push-type`, `apns-priority`, `apns-expiration` and `apns-collapse-id`, authenticated by the app's .p8 key
/// (`authorization: bearer <ES256 JWT>`) or, without one, by the client certificate of the token's environment (TLS,
/// no `authorization` header; see `APNsCredentials.authentication(for:)`). HTTPS endpoints negotiate HTTP/2 by ALPN; an
/// `http://` endpoint (tests, a local relay) is spoken to in HTTP/2 directly (prior knowledge).
public final class APNsSender: PushSender {
    let client: HTTPClient
    let tokens: APNsProviderTokens
    let timeout: Duration
    let logger: Logger

    public init(client: HTTPClient, timeout: Duration = .seconds(10), logger: Logger) {
        self.client = client
        self.timeout = timeout
        self.logger = logger
        tokens = APNsProviderTokens()
    }

    public func send(_ notification: PushNotification, credentials: APNsCredentials) async -> PushOutcome {
        await attempt(notification, credentials: credentials).outcome
    }

    public func attempt(_ notification: PushNotification, credentials: APNsCredentials) async -> PushAnswer {
        guard let authentication = credentials.authentication(for: notification.environment) else {
            // Only certificates, none for this token's environment: no retry can fix it, the token may be fine.
            return PushAnswer(
                outcome: .rejected(reason: "no APNs credentials for \(notification.environment.rawValue)"))
        }
        var headers: [(String, String)] = []
        var certificate: HTTPClientCertificate?
        switch authentication {
        case .token:
            do {
                headers.append(("authorization", "bearer \(try tokens.token(for: credentials))"))
            } catch {
                return PushAnswer(outcome: .retry(reason: "could not sign the provider token: \(error)"))
            }
        case .certificate(let identity):
            certificate = HTTPClientCertificate(
                certificatePEM: Array(identity.certificatePEM.utf8), privateKeyPEM: Array(identity.privateKeyPEM.utf8))
        }
        let endpoint = credentials.endpoint ?? notification.environment.apnsEndpoint
        let base = endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint
        let bundle = notification.bundleId.isEmpty ? credentials.bundleId : notification.bundleId
        headers += [
            ("apns-topic", notification.kind == .voip ? "\(bundle).voip" : bundle),
            ("apns-push-type", notification.kind.rawValue),
            ("apns-priority", "10"),
            ("apns-expiration", String(notification.expiration)),
            ("apns-collapse-id", notification.collapseId),
            ("content-type", "application/json"),
        ]
        let request = HTTPClientRequest(
            method: "POST", url: "\(base)/3/device/\(notification.token)", headers: headers,
            body: .bytes(notification.payload), timeout: timeout,
            httpVersion: base.hasPrefix("http://") ? .http2PriorKnowledge : .http2TLS, clientCertificate: certificate)
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request)
        } catch {
            return PushAnswer(outcome: .retry(reason: String(describing: error)))
        }
        let outcome = Self.outcome(status: response.status, body: response.body)
        if case .retry(let reason) = outcome, reason == "ExpiredProviderToken" || reason == "InvalidProviderToken" {
            tokens.invalidate(appId: credentials.appId)
        }
        return PushAnswer(outcome: outcome, status: response.status, vendorId: response.header("apns-id"))
    }

    /// What an APNs answer means (Apple's "Handling notification responses from APNs").
    static func outcome(status: Int, body: [UInt8]) -> PushOutcome {
        if status == 200 { return .delivered }
        let reason = (try? JSONValue.parse(body))?["reason"]?.stringValue ?? "HTTP \(status)"
        switch status {
        case 410:
            return .invalidToken(reason: reason)
        case 400 where ["BadDeviceToken", "DeviceTokenNotForTopic", "Unregistered"].contains(reason):
            return .invalidToken(reason: reason)
        case 403, 429, 500...599:
            return .retry(reason: reason)
        default:
            return .rejected(reason: reason)
        }
    }
}
