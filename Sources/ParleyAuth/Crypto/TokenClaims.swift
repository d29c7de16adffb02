/// The JWT claims of access and IM tokens (RFC 7519 §4.1 names plus Parley's own). Times are whole
/// seconds since 1970 (NumericDate).
public struct TokenClaims: Sendable, Hashable, Codable {
    public var iss: String
    /// `api` (REST access token), `im` (WebSocket) or `client` (a signed login's token: both).
    public var aud: String
    /// The user id.
    public var sub: String
    /// The app id.
    public var app: Int64
    /// The session id: tokens die with their session.
    public var sid: String
    /// The privacy-policy version the user had agreed to when the token was issued.
    public var pv: Int
    public var iat: Int64
    public var exp: Int64
    /// A random id (RFC 7519 §4.1.7): every issued token differs, also two issued for one session in one second
    /// (a renewal answers new tokens). Absent from tokens issued before it existed.
    public var jti: String?

    public static let issuer = "parley"

    public var principal: Principal { Principal(appId: app, userId: sub, sessionId: sid) }
}

/// Which kind of token a route takes, or a token is issued for.
public enum TokenAudience: String, Sendable, Hashable {
    case api
    case im
    /// Issued to backend-signed logins only (`POST /api/im/auth/login`): their clients (seeds 000 and 001) use one
    /// token for REST and the WebSocket. Accepted wherever `api` or `im` is; password logins keep the two apart.
    case client

    /// Whether a token issued for `issued` (its `aud` claim) opens a route that takes `self`.
    public func accepts(_ issued: String) -> Bool {
        issued == rawValue || issued == TokenAudience.client.rawValue
    }
}
