import Foundation
import ParleyAuth
import ParleyHTTPClient
import ParleyJSON

/// Makes one webhook call: the body in its envelope, signed with the app's secret (`WebhookSigner`), POSTed with
/// the app's timeout over the webhooks' own HTTP client (keep-alive connections reused across calls), each new
/// connection's address checked against the policy.
struct WebhookCaller: Sendable {
    let client: HTTPClient
    let directory: AppDirectory
    let secrets: AppSecretBox
    let policy: WebhookAddressPolicy

    enum Failure: Error, Equatable, CustomStringConvertible {
        /// The app or its secret cannot be read here (deleted, or sealed under another master key).
        case noSecret
        case badURL(String)
        case transport(HTTPClientError)

        var description: String {
            switch self {
            case .noSecret: "the app's secret cannot be opened"
            case .badURL(let reason): reason
            case .transport(let error): error.description
            }
        }
    }

    /// The envelope every call carries: `{"eventId", "event", "appKey", "createdAt", "attempt", "data"}`; `data` is
    /// JSON written as given.
    static func envelope(
        eventId: String, event: String, appKey: String, createdAt: Date, attempt: Int, data: [UInt8]
    ) -> [UInt8] {
        let milliseconds = ISO8601.epochMilliseconds(createdAt)
        var out = Array(#"{"eventId":"#.utf8)
        out += JSONValue.string(eventId).serialized()
        out += Array(#","event":"#.utf8) + JSONValue.string(event).serialized()
        out += Array(#","appKey":"#.utf8) + JSONValue.string(appKey).serialized()
        out += Array(#","createdAt":\#(milliseconds),"attempt":\#(attempt),"data":"#.utf8)
        out += data
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The body of a call carrying several events: `{"events": [envelope, ...]}`, in the order given.
    static func batch(_ envelopes: [[UInt8]]) -> [UInt8] {
        var out = Array(#"{"events":["#.utf8)
        for (index, envelope) in envelopes.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += envelope
        }
        out += Array("]}".utf8)
        return out
    }

    /// The app key of `appId`, when it is known here.
    func appKey(of appId: Int64) -> String? { directory.app(id: appId)?.appKey }

    func call(
        _ settings: WebhookSettings, event: String, eventId: String, body: [UInt8]
    ) async -> Result<HTTPClientResponse, Failure> {
        guard let app = directory.app(id: settings.appId),
            let secret = secrets.open(app.secretCiphertext, appKey: app.appKey)
        else { return .failure(.noSecret) }
        let url: WebhookURL
        do { url = try WebhookURL(settings.url) } catch { return .failure(.badURL(error.description)) }
        var headers = WebhookSigner.headers(
            appKey: app.appKey, secret: secret, target: url.target, body: body,
            timestamp: Int64(Date().timeIntervalSince1970))
        headers += [
            ("Content-Type", "application/json"), ("X-Parley-Event", event), ("X-Parley-Idempotency-Key", eventId),
            ("User-Agent", "Parley-Webhooks/1"),
        ]
        let policy = policy
        var request = HTTPClientRequest(
            method: "POST", url: settings.url, headers: headers, body: .bytes(body),
            timeout: .milliseconds(settings.timeoutMilliseconds))
        if !policy.allowPrivate {
            request.connectPolicy = { @Sendable address in policy.allows(address) }
        }
        do throws(HTTPClientError) {
            return .success(try await client.execute(request))
        } catch {
            return .failure(.transport(error))
        }
    }
}
