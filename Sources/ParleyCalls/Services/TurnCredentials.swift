import Foundation
import ParleyCrypto

/// Time-limited TURN credentials in coturn's REST API format (`use-auth-secret` with `static-auth-secret`):
/// username `<expiry unix seconds>:<userId>`, credential base64(HMAC-SHA-1(secret, username)). coturn recomputes
/// the credential from the username and refuses it after the expiry, so nothing is stored.
public struct TurnCredentials: Sendable, Encodable, Equatable {
    public var username: String
    /// The TURN password (`credential` as WebRTC's `RTCIceServer` names it).
    public var credential: String
    /// The same value under the name of the draft "REST API for access to TURN services" (coturn's docs).
    public var password: String
    public var ttl: Int
    public var uris: [String]

    public static func issue(secret: String, userId: String, ttlSeconds: Int, uris: [String], now: Date) -> Self {
        let expiry = Int64(now.timeIntervalSince1970) + Int64(ttlSeconds)
        let username = "\(expiry):\(userId)"
        let credential = Base64.encode(HMAC.sha1(key: Array(secret.utf8), message: Array(username.utf8)))
        return TurnCredentials(
            username: username, credential: credential, password: credential, ttl: ttlSeconds, uris: uris)
    }
}
