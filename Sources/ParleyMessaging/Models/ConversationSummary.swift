import Foundation
import ParleyJSON

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
    /// The user marked the conversation unread; their next read mark clears it.
    public var markedUnread: Bool
    public var unreadCount: Int64
    /// A message after the read point mentions the user (by id or everybody): the earliest such message's id, which a
    /// client jumps to; nil when none.
    public var mentionMsgId: String?
    public var readSeq: Int64
    /// single: the peer's read point, so that a client marks each of its own messages read (seq <= peerReadSeq).
    public var peerReadSeq: Int64?
    public var lastSeq: Int64
    public var lastMessagePreview: String
    /// Written as epoch milliseconds, the type of the field seed 000's conversation summary fills from it
    /// (`lastMessageTime: Int`, OpenIM's `latestMsgSendTime`).
    public var lastMessageTime: Date?
    public var lastMessageSenderId: String?
    /// The last message (the `IMMessage` wire); nil when there is none, or it is cleared away for this user.
    public var latestMessage: IMMessage?

    enum CodingKeys: String, CodingKey {
        case conversationId, chatType, peerUserId, groupId, showName, faceURL, memberCount, groupDissolved, isPinned,
            draftText, muted, markedUnread, unreadCount, mentioned, mentionMsgId, readSeq, peerReadSeq, lastSeq,
            lastMessagePreview,
            lastMessageTime,
            lastMessageSenderId, latestMessage
    }

    /// Fields that do not apply are left out, as documented; `latestMessage` is always there (null when none).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(conversationId, forKey: .conversationId)
        try c.encode(chatType, forKey: .chatType)
        try c.encodeIfPresent(peerUserId, forKey: .peerUserId)
        try c.encodeIfPresent(groupId, forKey: .groupId)
        try c.encode(showName, forKey: .showName)
        try c.encodeIfPresent(faceURL, forKey: .faceURL)
        try c.encodeIfPresent(memberCount, forKey: .memberCount)
        try c.encodeIfPresent(groupDissolved, forKey: .groupDissolved)
        try c.encode(isPinned, forKey: .isPinned)
        try c.encode(draftText, forKey: .draftText)
        try c.encode(muted, forKey: .muted)
        try c.encode(markedUnread, forKey: .markedUnread)
        try c.encode(unreadCount, forKey: .unreadCount)
        try c.encode(mentionMsgId != nil, forKey: .mentioned)
        if let mentionMsgId {
            try c.encode(mentionMsgId, forKey: .mentionMsgId)
        } else {
            try c.encodeNil(forKey: .mentionMsgId)
        }
        try c.encode(readSeq, forKey: .readSeq)
        try c.encodeIfPresent(peerReadSeq, forKey: .peerReadSeq)
        try c.encode(lastSeq, forKey: .lastSeq)
        try c.encode(lastMessagePreview, forKey: .lastMessagePreview)
        try c.encodeIfPresent(lastMessageTime.map(ISO8601.epochMilliseconds), forKey: .lastMessageTime)
        try c.encodeIfPresent(lastMessageSenderId, forKey: .lastMessageSenderId)
        if let latestMessage {
            try c.encode(latestMessage, forKey: .latestMessage)
        } else {
            try c.encodeNil(forKey: .latestMessage)
        }
    }
}
