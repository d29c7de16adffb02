import Foundation

public struct GroupInfo: Sendable, Hashable, Encodable {
    public var groupId: String
    public var conversationId: String
    public var name: String
    public var avatarKey: String?
    public var ownerId: String
    public var memberCount: Int
    public var dissolved: Bool
    public var createdAt: Date
}

public struct GroupMember: Sendable, Hashable, Encodable {
    public var userId: String
    public var role: GroupRole
    public var blocked: Bool
    public var nickname: String
    public var faceURL: String?
    public var joinedAt: Date
}
