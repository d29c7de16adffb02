import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel

/// A stored message. `content` and `extra` hold the stored JSON; clients get the wire form the seed SDKs decode
/// (`ImMessage`: content always a string, extra a string or null, editedAt epoch milliseconds), see `encode(to:)`.
/// Revoked messages keep id, seq and sender; content and extra are wiped.
public struct IMMessage: Sendable, Hashable, Encodable {
    /// Decimal string of a 64-bit id (JSON numbers lose precision above 2^53 in JavaScript clients).
    public var id: String
    public var conversationId: String
    public var seq: Int64
    public var fromId: String
    public var toId: String
    public var chatType: ChatType
    public var msgType: MessageType
    /// The stored JSON: a string for text, a document for structured types, null once revoked.
    public var content: JSONValue
    public var extra: JSONValue?
    /// nil: sent without one (never deduplicated).
    public var clientMsgId: String?
    public var revoked: Bool
    public var revokedBy: String?
    public var createdAt: Date
    public var editedAt: Date?
    /// The reactions as the reader sees them, set where one user reads messages (history, a message by id); nil
    /// (left out of the JSON) in events and sync, which every member shares.
    public var reactions: [MessageReaction]? = nil
    /// A reply's quote of the message it answers; nil (left out of the JSON) for other messages.
    public var reply: MessageReply? = nil
    /// Who a group message mentions; nil (left out of the JSON) when nobody.
    public var mentions: MessageMentions? = nil

    var numericID: Int64 { Int64(id) ?? 0 }

    /// A message id from a client (decimal, positive), else 1002.
    public static func parseID(_ raw: String) throws(APIError) -> Int64 { try MessagingInput.messageID(raw) }

    public init(
        id: String, conversationId: String, seq: Int64, fromId: String, toId: String, chatType: ChatType,
        msgType: MessageType, content: JSONValue, extra: JSONValue?, clientMsgId: String?, revoked: Bool,
        revokedBy: String?, createdAt: Date, editedAt: Date?
    ) {
        self.id = id
        self.conversationId = conversationId
        self.seq = seq
        self.fromId = fromId
        self.toId = toId
        self.chatType = chatType
        self.msgType = msgType
        self.content = content
        self.extra = extra
        self.clientMsgId = clientMsgId
        self.revoked = revoked
        self.revokedBy = revokedBy
        self.createdAt = createdAt
        self.editedAt = editedAt
    }

    /// `content` as clients get it: a stored string as itself (text, a custom string), any other document as its
    /// compact JSON text, "" once revoked. A text message costs no copy.
    public var wireContent: String { Self.wireText(content) ?? "" }

    /// `extra` as clients get it: a stored string as itself, any other JSON as its compact text, nil when absent.
    public var wireExtra: String? { extra.flatMap(Self.wireText) }

    /// `editedAt` in epoch milliseconds, truncated like `createdAt`'s milliseconds.
    public var editedAtMilliseconds: Int64? { editedAt.map(ISO8601.epochMilliseconds) }

    static func wireText(_ value: JSONValue) -> String? {
        switch value {
        case .null: return nil
        case .string(let string): return string
        default: return value.serializedString
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, conversationId, seq, fromId, toId, chatType, msgType, content, extra, clientMsgId, revoked, revokedBy,
            createdAt, editedAt, reply, mentions, reactions
    }

    /// The wire form, written by `jsonBytes()` (JSONBytesEncoder) and Foundation's JSONEncoder alike, byte for byte.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(conversationId, forKey: .conversationId)
        try c.encode(seq, forKey: .seq)
        try c.encode(fromId, forKey: .fromId)
        try c.encode(toId, forKey: .toId)
        try c.encode(chatType, forKey: .chatType)
        try c.encode(msgType, forKey: .msgType)
        try c.encode(wireContent, forKey: .content)
        if let extra = wireExtra { try c.encode(extra, forKey: .extra) } else { try c.encodeNil(forKey: .extra) }
        if let clientMsgId {
            try c.encode(clientMsgId, forKey: .clientMsgId)
        } else {
            try c.encodeNil(forKey: .clientMsgId)
        }
        try c.encode(revoked, forKey: .revoked)
        if let revokedBy { try c.encode(revokedBy, forKey: .revokedBy) } else { try c.encodeNil(forKey: .revokedBy) }
        try c.encode(createdAt, forKey: .createdAt)
        if let editedAt = editedAtMilliseconds {
            try c.encode(editedAt, forKey: .editedAt)
        } else {
            try c.encodeNil(forKey: .editedAt)
        }
        try c.encodeIfPresent(reply, forKey: .reply)
        try c.encodeIfPresent(mentions, forKey: .mentions)
        try c.encodeIfPresent(reactions, forKey: .reactions)
    }
}
