import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel

/// A stored message as clients see it. Revoked messages keep id, seq and sender; content and extra are null.
public struct IMMessage: Sendable, Hashable, Encodable {
    /// Decimal string of a 64-bit id (JSON numbers lose precision above 2^53 in JavaScript clients).
    public var id: String
    public var conversationId: String
    public var seq: Int64
    public var fromId: String
    public var toId: String
    public var chatType: ChatType
    public var msgType: MessageType
    public var content: JSONValue
    public var extra: JSONValue?
    public var clientMsgId: String
    public var revoked: Bool
    public var revokedBy: String?
    public var createdAt: Date
    public var editedAt: Date?

    var numericID: Int64 { Int64(id) ?? 0 }

    /// A message id from a client (decimal, positive), else 1002.
    public static func parseID(_ raw: String) throws(APIError) -> Int64 { try MessagingInput.messageID(raw) }

    enum CodingKeys: String, CodingKey {
        case id, conversationId, seq, fromId, toId, chatType, msgType, content, extra, clientMsgId, revoked, revokedBy,
            createdAt, editedAt
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(conversationId, forKey: .conversationId)
        try c.encode(seq, forKey: .seq)
        try c.encode(fromId, forKey: .fromId)
        try c.encode(toId, forKey: .toId)
        try c.encode(chatType, forKey: .chatType)
        try c.encode(msgType, forKey: .msgType)
        try c.encode(content, forKey: .content)
        try c.encode(extra ?? .null, forKey: .extra)
        try c.encode(clientMsgId, forKey: .clientMsgId)
        try c.encode(revoked, forKey: .revoked)
        if let revokedBy { try c.encode(revokedBy, forKey: .revokedBy) } else { try c.encodeNil(forKey: .revokedBy) }
        try c.encode(createdAt, forKey: .createdAt)
        if let editedAt { try c.encode(editedAt, forKey: .editedAt) } else { try c.encodeNil(forKey: .editedAt) }
    }
}
