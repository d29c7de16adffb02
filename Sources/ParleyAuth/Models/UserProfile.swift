import Foundation
import ParleyJSON

/// What other users of the same app may see about a user.
public struct PublicProfile: Sendable, Hashable, Codable {
    public var id: String
    public var nickname: String
    /// Object key of the avatar image (files feature); null when unset.
    public var avatar: String?
    /// A line or a few about the user; "" when unset.
    public var signature: String
    /// The app's own JSON value for the user (any JSON value, as the app sent it); null when unset.
    public var ex: JSONValue?
    /// The account was deleted: nickname and avatar are empty, and clients show their own "deleted user" marker.
    /// Their messages stay under this id.
    public var deleted: Bool

    public init(
        id: String, nickname: String, avatar: String?, signature: String, ex: JSONValue?, deleted: Bool = false
    ) {
        self.id = id
        self.nickname = nickname
        self.avatar = avatar
        self.signature = signature
        self.ex = ex
        self.deleted = deleted
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(nickname, forKey: .nickname)
        try container.encode(avatar, forKey: .avatar) // explicit null: clients see every field
        try container.encode(signature, forKey: .signature)
        try container.encode(ex, forKey: .ex)
        try container.encode(deleted, forKey: .deleted)
    }
}

/// The signed-in user's own profile.
public struct UserProfile: Sendable, Hashable, Codable {
    public var id: String
    /// Null for users created by the app's own backend (signed login).
    public var username: String?
    public var nickname: String
    public var avatar: String?
    public var signature: String
    public var ex: JSONValue?
    /// False keeps the user out of user search.
    public var searchable: Bool
    /// The privacy-policy version the user last agreed to.
    public var privacyVersion: Int
    public var createdAt: Date

    public var publicProfile: PublicProfile {
        PublicProfile(id: id, nickname: nickname, avatar: avatar, signature: signature, ex: ex)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(username, forKey: .username)
        try container.encode(nickname, forKey: .nickname)
        try container.encode(avatar, forKey: .avatar)
        try container.encode(signature, forKey: .signature)
        try container.encode(ex, forKey: .ex)
        try container.encode(searchable, forKey: .searchable)
        try container.encode(privacyVersion, forKey: .privacyVersion)
        try container.encode(createdAt, forKey: .createdAt)
    }
}
