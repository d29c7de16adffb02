import ParleyJSON

/// The message an after_send or after_edit event carries, as the trigger copied it (`webhook_message`,
/// migrations/0030), and its JSON: `{"message": {...}}` (openapi.yaml, `WebhookMessage`). The JSON is written here
/// rather than in the sending transaction, where building it cost more than the rest of the event.
struct WebhookMessage: Sendable, Equatable {
    var id: Int64
    var conversationId: String
    var seq: Int64
    var fromId: String
    var toId: String
    var chatType: String
    var msgType: String
    /// JSON text as stored (nil once revoked): written as is, so numbers keep the sender's spelling.
    var content: String?
    var extra: String?
    /// Nil for messages the server wrote without one (migrations/0013).
    var clientMsgId: String?
    /// Epoch milliseconds.
    var createdAt: Int64
    var editedAt: Int64?
}

extension WebhookMessage {
    /// The event's `data`: `{"message": {"id", "conversationId", "seq", "fromId", "toId", "chatType", "msgType",
    /// "content", "extra", "clientMsgId", "system", "createdAt", "editedAt"}}`.
    var eventData: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256 + (content?.utf8.count ?? 0) + (extra?.utf8.count ?? 0))
        out += #"{"message":{"id":"#.utf8
        JSONString.append(String(id), to: &out)
        out += #","conversationId":"#.utf8
        JSONString.append(conversationId, to: &out)
        out += #","seq":\#(seq),"fromId":"#.utf8
        JSONString.append(fromId, to: &out)
        out += #","toId":"#.utf8
        JSONString.append(toId, to: &out)
        out += #","chatType":"#.utf8
        JSONString.append(chatType, to: &out)
        out += #","msgType":"#.utf8
        JSONString.append(msgType, to: &out)
        out += #","content":"#.utf8
        out += (content ?? "null").utf8
        out += #","extra":"#.utf8
        out += (extra ?? "null").utf8
        out += #","clientMsgId":"#.utf8
        if let clientMsgId { JSONString.append(clientMsgId, to: &out) } else { out += "null".utf8 }
        out += #","system":\#(msgType == "notify"),"createdAt":\#(createdAt),"editedAt":"#.utf8
        out += (editedAt.map(String.init) ?? "null").utf8
        out += "}}".utf8
        return out
    }
}
