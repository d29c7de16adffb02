import Foundation
import ParleyAuth
import ParleyCrypto

extension LiveApp {
    /// The headers of a request signed with an app's secret (see `RequestSignature`), as the app's backend sends them.
    public static func signedHeaders(
        appKey: String, secret: String, method: String, target: String, body: [UInt8]
    ) -> [String: String] {
        let timestamp = String(Int64(Date().timeIntervalSince1970))
        let nonce = SecureRandom.token(bytes: 12)
        let signature = RequestSignature.sign(
            secret: secret, method: method, pathWithQuery: target, timestamp: timestamp, nonce: nonce, body: body)
        var headers = ["X-App-Key": appKey, "X-Timestamp": timestamp, "X-Nonce": nonce, "X-Signature": signature]
        if !body.isEmpty { headers["Content-Type"] = "application/json" }
        return headers
    }

    /// A signed server-to-server call (the admin API) as an app's backend sends it: `json` is the body (none when
    /// nil), `bodyBytes` a raw body instead; `headers` add to (or replace) the signed ones.
    public func adminCall(
        _ method: String, _ target: String, appKey: String, secret: String, json: Any? = nil, bodyBytes: [UInt8]? = nil,
        headers extra: [String: String] = [:]
    ) async throws -> TestResponse {
        let body = try bodyBytes ?? json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        var headers = Self.signedHeaders(appKey: appKey, secret: secret, method: method, target: target, body: body)
        headers.merge(extra) { _, added in added }
        return try await client().send(method, target, headers: headers, body: body)
    }
}

extension MessagingFixture {
    /// `LiveApp.adminCall` signed by this fixture's app (or with `secret` instead of its own).
    public func admin(_ method: String, _ target: String, json: Any? = nil, secret: String? = nil) async throws
        -> TestResponse
    {
        try await live.adminCall(method, target, appKey: appKey, secret: secret ?? self.secret, json: json)
    }
}
