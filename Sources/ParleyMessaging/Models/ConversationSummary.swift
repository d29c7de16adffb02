import Foundation

/// One entry of a user's conversation list: the conversation as this user sees it.
public struct ConversationSummary: Sendable, Hashable, Encodable {
    public var conversationId: String
    public var chatType: ChatType
    /// single: the other user; group: nil.
    public var peerUserId: String?
    /// group: the group; single: nil.
    public var groupId: String?
    /// The peer's nickname (or id) or the group's name.
    public var showName: String
    /// The peer's avatar or the group's avatar object key.
    public var faceURL: String?
    public var memberCount: Int?
    public var groupDissolved: Bool?
    public var isPinned: Bool
    public var draftText: String
    public var muted: Bool
    public var unreadCount: Int64
    public var readSeq: Int64
    public var lastSeq: Int64
    public var lastMessagePreview: String
    public var lastMessageTime: Date?
    public var lastMessageSenderId: String?
}
