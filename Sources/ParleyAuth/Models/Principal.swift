import ParleyHTTP

/// Who is calling: the app (tenant), the user inside it and the session the token belongs to.
public struct Principal: Sendable, Hashable, Codable {
    public var appId: Int64
    public var userId: String
    public var sessionId: String
    /// Where the request came from, which is not sent the live events of the changes it makes (it has the answer):
    /// the session for a REST request (the device), one connection's own key for a WebSocket frame (so the
    /// session's other connections, a second `ImClient` on the device as seed 001 opens one per screen, or another
    /// device sharing the session, do get them). Events match it against a connection's session id or its key.
    public var origin: String

    public init(appId: Int64, userId: String, sessionId: String, origin: String? = nil) {
        self.appId = appId
        self.userId = userId
        self.sessionId = sessionId
        self.origin = origin ?? sessionId
    }
}

/// The request-context slot `Authenticator` fills: `context[PrincipalKey.self]`.
public enum PrincipalKey: RequestContextKey {
    public typealias Value = Principal
}

extension RequestContext {
    /// The authenticated principal, or 1030 when the route was not wrapped by `Authenticator.protect`
    /// (a wiring mistake, answered as "not authenticated" rather than trusting anything).
    public func requirePrincipal() throws(APIError) -> Principal {
        guard let principal = self[PrincipalKey.self] else { throw APIError.tokenMissing }
        return principal
    }
}
