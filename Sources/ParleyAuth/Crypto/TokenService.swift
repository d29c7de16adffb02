import Foundation
import ParleyCrypto
import ParleyHTTP

/// A token and when it stops working.
public struct IssuedToken: Sendable, Hashable {
    public var token: String
    public var expiresAt: Date
}

/// Issues and verifies access and IM tokens (HS256 JWTs). Verification is pure CPU (no database): the
/// revocation and consent checks that follow it use in-memory state.
public struct TokenService: Sendable {
    let keys: TokenKeyRing

    public init(keys: TokenKeyRing) {
        self.keys = keys
    }

    public func issue(
        _ audience: TokenAudience, for principal: Principal, consentedVersion: Int, lifetime: Int,
        now: Date = Date()
    ) throws -> IssuedToken {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        let claims = TokenClaims(
            iss: TokenClaims.issuer, aud: audience.rawValue, sub: principal.userId,
            app: principal.appId, sid: principal.sessionId, pv: consentedVersion,
            iat: issuedAt, exp: issuedAt + Int64(lifetime), jti: SecureRandom.token(bytes: 9))
        let token = try JWT.sign(header: ["kid": keys.signingKeyID], claims: claims, key: keys.signingKey)
        return IssuedToken(token: token, expiresAt: Date(timeIntervalSince1970: TimeInterval(claims.exp)))
    }

    /// Checks signature (HS256 only, known `kid`), issuer, audience and expiry, in that order, so that a forged
    /// token is always 1030 and only a genuine one can be told "expired" (1031) or "wrong audience" (1032).
    public func verify(_ token: String, audience: TokenAudience, now: Int64 = Int64(Date().timeIntervalSince1970))
        throws(APIError) -> TokenClaims
    {
        let claims = try authenticate(token)
        try check(claims, audience: audience, now: now)
        return claims
    }

    /// The claims of a token this server signed (signature and issuer checked; audience and expiry not yet).
    public func authenticate(_ token: String) throws(APIError) -> TokenClaims {
        let claims: TokenClaims
        do {
            claims = try JWT.verify(token, keys: { keys.key(for: $0) }, as: TokenClaims.self)
        } catch .badSignature where keys.hasFallback {
            guard let signed = try? JWT.verify(token, keys: { keys.fallbackKey(for: $0) }, as: TokenClaims.self) else {
                throw APIError.tokenInvalid
            }
            claims = signed
        } catch {
            throw APIError.tokenInvalid
        }
        guard claims.iss == TokenClaims.issuer else { throw APIError.tokenInvalid }
        return claims
    }

    /// Audience, then expiry, of claims whose signature was checked.
    public func check(_ claims: TokenClaims, audience: TokenAudience, now: Int64) throws(APIError) {
        guard audience.accepts(claims.aud) else {
            throw audience == .api
                ? APIError.tokenWrongAudience.with(message: "this endpoint takes an access token, not an IM token")
                : APIError.tokenWrongAudience.with(message: "the WebSocket takes an IM token, not an access token")
        }
        guard claims.exp > now else { throw APIError.tokenExpired }
    }
}
