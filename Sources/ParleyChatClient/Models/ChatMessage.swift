import ParleyJSON

/// A stored message (`IMMessage` in openapi.yaml), as REST, `ack`s, `message`/`edit` events and sync carry it.
public struct ChatMessage: Sendable, Equatable {
    /// A 64-bit id as a decimal string.
    public var id: String
    public var conversationId: String
    /// 1, 2, 3, ... in the conversation, without gaps.
    public var seq: Int64
    public var fromId: String
    public var toId: String
    /// `single` or `group`.
    public var chatType: String
    /// `text`, `image`, `file`, ..., `notify`.
    public var msgType: String
    /// Depends on `msgType` (a string for text); null once revoked.
    public var content: JSONValue
    public var revoked: Bool
    public var createdAt: String
    public var editedAt: String?

    public init(json: JSONValue) throws(ParleyAPIError) {
        id = try json.required("id")
        conversationId = try json.required("conversationId")
        seq = try json.requiredInt("seq")
        fromId = try json.required("fromId")
        toId = try json.required("toId")
        chatType = try json.required("chatType")
        msgType = try json.required("msgType")
        content = json["content"] ?? .null
        revoked = json["revoked"]?.boolValue ?? false
        createdAt = json["createdAt"]?.stringValue ?? ""
        editedAt = json["editedAt"]?.stringValue
    }
}
