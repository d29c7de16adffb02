import Foundation
import ParleyAuth
import ParleyCrypto

extension MessagingFixture {
    /// A signed server-to-server call (`/api/admin/...`) as the app's backend makes it; `secret` nil: this app's.
    public func admin(_ method: String, _ target: String, json: [String: Any]? = nil, secret: String? = nil)
        async throws -> TestResponse
    {
        let body = try json.map { Array(try JSONSerialization.data(withJSONObject: $0)) } ?? []
        let timestamp = String(Int64(Date().timeIntervalSince1970))
        let nonce = SecureRandom.token(bytes: 12)
        let signature = RequestSignature.sign(
            secret: secret ?? self.secret, method: method, pathWithQuery: target, timestamp: timestamp, nonce: nonce,
            body: body)
        return try await client.send(
            method, target,
            headers: ["X-App-Key": appKey, "X-Timestamp": timestamp, "X-Nonce": nonce, "X-Signature": signature],
            body: body)
    }
}
