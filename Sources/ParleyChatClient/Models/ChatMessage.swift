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
    /// Depends on `msgType`: the text for text; for other types the JSON document the wire carries as a string,
    /// parsed back (a custom string that is no JSON document stays a string); "" once revoked.
    public var content: JSONValue
    public var revoked: Bool
    public var createdAt: String
    /// Epoch milliseconds of the last edit.
    public var editedAt: Int64?

    public init(json: JSONValue) throws(ParleyAPIError) {
        id = try json.required("id")
        conversationId = try json.required("conversationId")
        seq = try json.requiredInt("seq")
        fromId = try json.required("fromId")
        toId = try json.required("toId")
        chatType = try json.required("chatType")
        msgType = try json.required("msgType")
        revoked = json["revoked"]?.boolValue ?? false
        content = Self.document(json["content"] ?? .null, msgType: msgType)
        createdAt = json["createdAt"]?.stringValue ?? ""
        editedAt = json["editedAt"]?.int64Value
    }

    /// The wire's `content` string as the document it holds (text stays text).
    static func document(_ content: JSONValue, msgType: String) -> JSONValue {
        guard msgType != "text", case .string(let text) = content, !text.isEmpty,
            let parsed = try? JSONValue.parse(text)
        else { return content }
        return parsed
    }
}
