import Glibc
import ParleyCrypto
import ParleyJSON

/// The app's server-to-server credentials (`parley app create` prints both).
struct AppCredentials: Sendable {
    var appKey: String
    var appSecret: String
}

/// `POST /api/im/auth/login`, signed as an app backend signs it (openapi.yaml, "Signed server-to-server
/// requests"): an IM token for any user id without password hashing, so that thousands of benchmark users cost
/// seconds, not the minutes scrypt would take.
///
/// The string to sign is ParleyAuth's `RequestSignature.stringToSign`, rebuilt here from its documentation on
/// purpose: a client that follows the document is what this checks, not the server's own helper.
enum SignedLogin {
    static let path = "/api/im/auth/login"

    /// Headers and body for one login of `userId`.
    static func request(app: AppCredentials, userId: String, platform: String = "ios")
        -> (headers: [(String, String)], body: [UInt8])
    {
        let body = JSONValue.object(
            JSONObject([
                ("appKey", .string(app.appKey)), ("userId", .string(userId)), ("platform", .string(platform)),
            ])
        ).serialized()
        let timestamp = String(time(nil))
        let nonce = "n" + Hex.encode(SecureRandom.bytes(12))
        let message = "POST\n\(path)\n\(timestamp)\n\(nonce)\n" + Hex.encode(SHA256.hash(body))
        let signature = Hex.encode(HMAC.sha256(key: Array(app.appSecret.utf8), message: Array(message.utf8)))
        return (
            [
                ("X-App-Key", app.appKey), ("X-Timestamp", timestamp), ("X-Nonce", nonce),
                ("X-Signature", signature),
            ], body
        )
    }

    /// The IM token of one login (`data.token`).
    static func login(_ client: SetupHTTPClient, app: AppCredentials, userId: String) throws(BenchError) -> String {
        let (headers, body) = request(app: app, userId: userId)
        let data = try client.request("POST", path, headers: headers, body: body).data("signed login of \(userId)")
        guard let token = data["token"]?.stringValue ?? data["imToken"]?.stringValue else {
            throw BenchError("signed login of \(userId): no `data.token` in the answer")
        }
        return token
    }
}
