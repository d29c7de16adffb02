import Foundation

/// The answer of a signed login (`POST /api/im/auth/login`): `token` (kept from when it answered an IM token alone)
/// is a client token, valid on every client REST route and on `/ws`, for the backend-signed clients that use one
/// token for everything; the session's separate tokens follow, as the password login answers them.
public struct SignedLoginResponse: Sendable, Encodable {
    public var token: String
    public var expiresAt: Date
    /// Whether the login renewed the device's existing session (same `sessionId`, its sockets stay open).
    public var renewed: Bool
    public var tokens: AuthTokens

    enum CodingKeys: String, CodingKey {
        case token, expiresAt, renewed, user, sessionId, accessToken, accessTokenExpiresAt, refreshToken
        case refreshTokenExpiresAt, imToken, imTokenExpiresAt
    }

    /// One flat object: the session's fields beside `token`, as the password login names them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(token, forKey: .token)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(renewed, forKey: .renewed)
        try container.encode(tokens.user, forKey: .user)
        try container.encode(tokens.sessionId, forKey: .sessionId)
        try container.encode(tokens.accessToken, forKey: .accessToken)
        try container.encode(tokens.accessTokenExpiresAt, forKey: .accessTokenExpiresAt)
        try container.encode(tokens.refreshToken, forKey: .refreshToken)
        try container.encode(tokens.refreshTokenExpiresAt, forKey: .refreshTokenExpiresAt)
        try container.encode(tokens.imToken, forKey: .imToken)
        try container.encode(tokens.imTokenExpiresAt, forKey: .imTokenExpiresAt)
    }
}
