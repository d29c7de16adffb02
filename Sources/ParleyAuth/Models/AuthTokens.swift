import Foundation

/// The answer of register, login and refresh; client SDKs are written against these exact names.
public struct AuthTokens: Sendable, Encodable {
    public var user: UserProfile
    public var sessionId: String
    public var accessToken: String
    public var accessTokenExpiresAt: Date
    public var refreshToken: String
    public var refreshTokenExpiresAt: Date
    public var imToken: String
    public var imTokenExpiresAt: Date
}

/// An IM token on its own (`POST /api/im/auth/login`, `POST /api/im/auth/token`).
public struct IMTokenResponse: Sendable, Encodable {
    public var token: String
    public var expiresAt: Date
}
