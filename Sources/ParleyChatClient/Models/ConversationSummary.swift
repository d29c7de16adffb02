import ParleyJSON

/// One line of the conversation list (`ConversationSummary` in openapi.yaml), as the caller sees it.
public struct ConversationSummary: Sendable, Equatable {
    public var conversationId: String
    public var chatType: String
    /// 1:1 only: the other user.
    public var peerUserId: String?
    /// Groups only.
    public var groupId: String?
    /// The peer's nickname or the group's name.
    public var showName: String
    public var unreadCount: Int64
    public var lastSeq: Int64
    public var lastMessagePreview: String

    public init(json: JSONValue) throws(ParleyAPIError) {
        conversationId = try json.required("conversationId")
        chatType = try json.required("chatType")
        peerUserId = json["peerUserId"]?.stringValue
        groupId = json["groupId"]?.stringValue
        showName = json["showName"]?.stringValue ?? conversationId
        unreadCount = json["unreadCount"]?.int64Value ?? 0
        lastSeq = json["lastSeq"]?.int64Value ?? 0
        lastMessagePreview = json["lastMessagePreview"]?.stringValue ?? ""
    }
}
