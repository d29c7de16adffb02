import Foundation
import ParleyJSON

public struct GroupInfo: Sendable, Hashable, Encodable {
    public var groupId: String
    public var conversationId: String
    public var name: String
    public var avatarKey: String?
    public var ownerId: String
    public var memberCount: Int
    public var dissolved: Bool
    public var createdAt: Date
    /// Only the owner and admins may post (mute all).
    public var mutedAll: Bool
    /// "" when unset.
    public var announcement: String
    /// "" when unset.
    public var introduction: String
    /// The app's own data (a JSON object), nil when unset.
    public var ex: JSONValue?
    public var joinPolicy: GroupJoinPolicy
}

public struct GroupMember: Sendable, Hashable, Encodable {
    public var userId: String
    public var role: GroupRole
    public var blocked: Bool
    public var nickname: String
    public var faceURL: String?
    public var joinedAt: Date
    /// Muted in the group until then (nil: not muted; a time past means no longer muted).
    public var mutedUntil: Date?
}
