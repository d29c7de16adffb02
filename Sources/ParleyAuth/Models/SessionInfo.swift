import Foundation

/// A device session as `GET /api/auth/sessions` lists it.
public struct SessionInfo: Sendable, Hashable, Encodable {
    public var id: String
    public var platform: String
    public var deviceId: String
    public var deviceModel: String
    public var ipAddress: String
    public var createdAt: Date
    /// Updated at login, refresh and IM-token renewal (not on every request: that would be a write per call).
    public var lastSeenAt: Date
    /// True for the session of the token that asked.
    public var current: Bool
}
