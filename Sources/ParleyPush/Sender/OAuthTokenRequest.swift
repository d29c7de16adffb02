import Foundation
import ParleyHTTPClient
import ParleyJSON

/// One OAuth 2.0 token request (RFC 6749 section 4.4 and RFC 7523 section 2.1): a form POST answered with
/// `{"access_token", "expires_in"}`.
enum OAuthTokenRequest {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    static func fetch(
        client: HTTPClient, url: String, form: [(String, String)], timeout: Duration
    ) async throws -> OAuthAccessToken {
        let request = HTTPClientRequest(
            method: "POST", url: url,
            headers: [("content-type", "application/x-www-form-urlencoded"), ("accept", "application/json")],
            body: .bytes(Array(encode(form).utf8)), timeout: timeout, httpVersion: httpVersion(url))
        let response = try await client.execute(request)
        let answer = try? JSONValue.parse(response.body)
        guard response.status == 200, let token = answer?["access_token"]?.stringValue, !token.isEmpty else {
            // Token endpoints name the problem in `error` (a string at Google, a number at Huawei).
            let error = answer?["error"].map { $0.stringValue ?? $0.serializedString } ?? "no access_token"
            throw Failed(description: "token endpoint answered HTTP \(response.status): \(error)")
        }
        // Both vendors issue tokens for an hour; a missing or odd lifetime is taken as a short one.
        let expiresIn = answer?["expires_in"]?.int64Value.map { Int(clamping: $0) } ?? 600
        return OAuthAccessToken(value: token, expiresIn: max(0, expiresIn))
    }

    /// `application/x-www-form-urlencoded` (WHATWG URL, "application/x-www-form-urlencoded serializing").
    static func encode(_ form: [(String, String)]) -> String {
        form.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    private static let unreserved = CharacterSet(
        charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._*")

    private static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// HTTP/2 by ALPN over TLS (HTTP/1.1 when the peer has no HTTP/2); plain HTTP/1.1 to `http://` (tests, relays).
    static func httpVersion(_ url: String) -> HTTPClientRequest.HTTPVersion {
        url.hasPrefix("http://") ? .http1_1 : .http2TLS
    }
}

/// One push to an OAuth-protected vendor API (FCM, HMS): the JSON `body` POSTed to `url` with a bearer access token
/// from `tokens` (fetched by `fetch` when none is cached). When `refused` says the vendor refused the token (revoked
/// or expired before its time), it is dropped and the push sent once more with a new one; a second refusal answers
/// `exhausted`. Anything else answers `outcome`; a failed token request or transport is retried later.
struct OAuthPush {
    let client: HTTPClient
    let tokens: OAuthAccessTokens
    let timeout: Duration

    func send(
        _ body: [UInt8], to url: String, key: OAuthAccessTokens.Key, vendor: String,
        fetch: @escaping @Sendable () async throws -> OAuthAccessToken,
        refused: (HTTPClientResponse) -> Bool, outcome: (HTTPClientResponse) -> PushOutcome,
        exhausted: (HTTPClientResponse) -> PushOutcome
    ) async -> PushOutcome {
        for attempt in 1...2 {
            let accessToken: String
            do {
                accessToken = try await tokens.token(for: key, fetch: fetch)
            } catch {
                return .retry(reason: "\(vendor) access token: \(error)")
            }
            let request = HTTPClientRequest(
                method: "POST", url: url,
                headers: [("authorization", "Bearer \(accessToken)"), ("content-type", "application/json")],
                body: .bytes(body), timeout: timeout, httpVersion: OAuthTokenRequest.httpVersion(url))
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request)
            } catch {
                return .retry(reason: String(describing: error))
            }
            guard refused(response) else { return outcome(response) }
            tokens.invalidate(key, token: accessToken)
            if attempt == 2 { return exhausted(response) }
        }
        preconditionFailure("the loop answers on its second attempt")
    }
}
