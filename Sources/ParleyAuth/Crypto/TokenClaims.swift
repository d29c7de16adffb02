/// The JWT claims of access and IM tokens (RFC 7519 §4.1 names plus Parley's own). Times are whole
/// seconds since 1970 (NumericDate).
public struct TokenClaims: Sendable, Hashable, Codable {
    public var iss: String
    /// `api` (REST access token) or `im` (WebSocket).
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

    public static let issuer = "parley"

    public var principal: Principal { Principal(appId: app, userId: sub, sessionId: sid) }
}

/// Which kind of token a route takes.
public enum TokenAudience: String, Sendable, Hashable {
    case api
    case im
}
