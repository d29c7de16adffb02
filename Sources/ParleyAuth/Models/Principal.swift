import ParleyHTTP

/// Who is calling: the app (tenant), the user inside it and the session the token belongs to.
public struct Principal: Sendable, Hashable, Codable {
    public var appId: Int64
    public var userId: String
    public var sessionId: String

    public init(appId: Int64, userId: String, sessionId: String) {
        self.appId = appId
        self.userId = userId
        self.sessionId = sessionId
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
