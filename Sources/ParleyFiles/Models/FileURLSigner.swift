import ParleyCrypto
import Synchronization

/// Signs and checks download URLs: `sig = base64url(HMAC-SHA256(appKey, "GET\n<objectKey>\n<exp>"))`, where the
/// per-app key is derived from the server's secret and the app id taken from the object key. A signature made
/// for one app never verifies for another app's key, and changing the key or the expiry breaks it.
public final class FileURLSigner: Sendable {
    private let secret: [UInt8]
    /// Per-app keys, derived once (a download verifies one signature; deriving costs another HMAC).
    private let appKeys = Mutex<[Int64: HMACKey]>([:])

    /// `secret`: the server-wide signing secret (derived from the master key at start-up).
    public init(secret: [UInt8]) {
        self.secret = HMAC.sha256(key: secret, message: Array("parley-files-url-v1".utf8))
    }

    public enum Verdict: Sendable, Equatable { case valid, expired, invalid }

    public func signature(objectKey: String, expiresAt: Int64, appId: Int64) -> String {
        Base64URL.encode(mac(objectKey: objectKey, expiresAt: expiresAt, appId: appId))
    }

    /// The query string for a download: `exp=...&sig=...`.
    public func query(objectKey: String, expiresAt: Int64, appId: Int64) -> String {
        "exp=\(expiresAt)&sig=\(signature(objectKey: objectKey, expiresAt: expiresAt, appId: appId))"
    }

    /// Checks the signature first (in constant time), then the expiry: a tampered expiry is `invalid`.
    public func verify(objectKey: String, expiresAt: String?, signature: String?, now: Int64) -> Verdict {
        guard let appId = ObjectKey.appId(of: objectKey), let expiresAt, let exp = Int64(expiresAt),
              String(exp) == expiresAt, let signature, let given = Base64URL.decode(signature),
              given.count == SHA256.byteCount else { return .invalid }
        let expected = mac(objectKey: objectKey, expiresAt: exp, appId: appId)
        guard ConstantTime.equals(given, expected) else { return .invalid }
        return exp > now ? .valid : .expired
    }

    private func mac(objectKey: String, expiresAt: Int64, appId: Int64) -> [UInt8] {
        let appKey = appKeys.withLock { keys in
            if let key = keys[appId] { return key }
            let key = HMACKey(HMAC.sha256(key: secret, message: Array("app:\(appId)".utf8)))
            if keys.count >= 100_000 { keys.removeAll() }
            keys[appId] = key
            return key
        }
        return appKey.authenticate(Array("GET\n\(objectKey)\n\(expiresAt)".utf8))
    }
}
