import ParleyJSON

/// What register, login and refresh answer (`AuthTokens` in openapi.yaml): the user and a device session's tokens.
public struct AuthSession: Sendable, Equatable {
    public var userId: String
    public var username: String?
    public var nickname: String
    public var sessionId: String
    /// For REST (`Authorization: Bearer`), 15 minutes.
    public var accessToken: String
    /// Single use: `POST /api/auth/refresh` answers a new one.
    public var refreshToken: String
    /// For the WebSocket (`GET /ws`), 24 hours.
    public var imToken: String

    public init(json: JSONValue) throws(ParleyAPIError) {
        let user = json["user"] ?? .null
        userId = try user.required("id")
        username = user["username"]?.stringValue
        nickname = user["nickname"]?.stringValue ?? userId
        sessionId = try json.required("sessionId")
        accessToken = try json.required("accessToken")
        refreshToken = try json.required("refreshToken")
        imToken = try json.required("imToken")
    }
}
