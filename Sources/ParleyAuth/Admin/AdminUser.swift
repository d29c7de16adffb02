import Foundation
import ParleyJSON

/// A user as the app's backend sees it (`GET /api/admin/users/{userId}`): the profile, the account's state and its
/// open sessions.
public struct AdminUser: Sendable, Encodable {
    public var id: String
    /// Null for users the app's backend manages (signed login, admin import); set for built-in accounts.
    public var username: String?
    public var nickname: String
    public var avatar: String?
    public var signature: String
    public var ex: JSONValue?
    public var searchable: Bool
    public var createdAt: Date
    /// Created by the app's backend (no password): only its backend deletes it.
    public var managedByApp: Bool
    public var banned: Bool
    public var bannedAt: Date?
    public var deleted: Bool
    public var deletedAt: Date?
    /// The last login, refresh or IM-token renewal of its open sessions; null when it has none.
    public var lastActiveAt: Date?
    /// Its open sessions (one per signed-in device), most recently seen first.
    public var sessions: [AdminSession]

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(username, forKey: .username)
        try container.encode(nickname, forKey: .nickname)
        try container.encode(avatar, forKey: .avatar)
        try container.encode(signature, forKey: .signature)
        try container.encode(ex, forKey: .ex)
        try container.encode(searchable, forKey: .searchable)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(managedByApp, forKey: .managedByApp)
        try container.encode(banned, forKey: .banned)
        try container.encode(bannedAt, forKey: .bannedAt)
        try container.encode(deleted, forKey: .deleted)
        try container.encode(deletedAt, forKey: .deletedAt)
        try container.encode(lastActiveAt, forKey: .lastActiveAt)
        try container.encode(sessions, forKey: .sessions)
    }

    enum CodingKeys: String, CodingKey {
        case id, username, nickname, avatar, signature, ex, searchable, createdAt, managedByApp, banned, bannedAt
        case deleted, deletedAt, lastActiveAt, sessions
    }
}

/// An open session of a user, for the backend to end one (`POST .../logout {sessionId}`).
public struct AdminSession: Sendable, Hashable, Encodable {
    public var id: String
    public var platform: String
    public var deviceId: String
    public var deviceModel: String
    public var createdAt: Date
    public var lastSeenAt: Date
}

/// What an import did to one user.
public struct AdminImportResult: Sendable, Encodable {
    public enum Status: String, Sendable, Encodable {
        case created, updated, failed
    }

    public var userId: String
    public var status: Status
    /// For `failed`: the error code and message the same change would answer alone.
    public var code: Int?
    public var message: String?

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(userId, forKey: .userId)
        try container.encode(status, forKey: .status)
        if let code { try container.encode(code, forKey: .code) }
        if let message { try container.encode(message, forKey: .message) }
    }

    enum CodingKeys: String, CodingKey { case userId, status, code, message }
}
