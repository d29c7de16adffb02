import Foundation
import ParleyCrypto
import Synchronization

/// APNs provider tokens (ES256 JWTs), one per app and key, reused until 50 minutes old: APNs refuses tokens older
/// than an hour and throttles apps that make new ones more often than every 20 minutes.
final class APNsProviderTokens: Sendable {
    private struct Key: Hashable {
        var appId: Int64
        var teamId: String
        var keyId: String
    }

    private struct Entry {
        var token: String
        var issuedAt: Int
    }

    static let renewAfterSeconds = 50 * 60
    private let cache = Mutex<[Key: Entry]>([:])
    private let now: @Sendable () -> Int

    init(now: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }) {
        self.now = now
    }

    private struct Claims: Encodable {
        var iss: String
        var iat: Int
    }

    /// Signed under the lock: pushes sent at once to a cold cache (a worker sends a job's pushes concurrently) must
    /// share one new token, not each make their own. Signing happens once per 50 minutes per app.
    func token(for credentials: APNsCredentials) throws -> String {
        guard let signingKey = credentials.tokenKey else { throw CryptoError.invalidKeyFormat("no .p8 key") }
        let key = Key(appId: credentials.appId, teamId: credentials.teamId, keyId: credentials.keyId)
        let time = now()
        return try cache.withLock { cache throws -> String in
            if let entry = cache[key], time - entry.issuedAt < Self.renewAfterSeconds { return entry.token }
            let token = try JWT.signES256(
                header: ["kid": credentials.keyId],
                claims: Claims(iss: credentials.teamId, iat: time), key: signingKey)
            cache[key] = Entry(token: token, issuedAt: time)
            return token
        }
    }

    /// Forgets the app's token (APNs answered 403 ExpiredProviderToken or InvalidProviderToken).
    func invalidate(appId: Int64) {
        cache.withLock { cache in cache = cache.filter { $0.key.appId != appId } }
    }
}
