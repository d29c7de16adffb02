import ParleyJSON
import ParleyMessageModel

/// The short quote a reply carries of the message it answers (`reply` in the message's JSON). Kept with the reply
/// (`messages.reply_quote`) and rewritten when the original is revoked ("message revoked") or edited, so that history
/// shows it without reading the original.
public struct MessageReply: Sendable, Hashable, Encodable {
    public var msgId: String
    public var fromId: String
    public var msgType: MessageType
    /// One line, as conversation previews are (`[image]`, the text up to 100 characters, "message revoked").
    public var text: String
    public var revoked: Bool

    /// The quote of `message` as it is now.
    init(quoting message: IMMessage) {
        msgId = message.id
        fromId = message.fromId
        msgType = message.msgType
        text = MessagePreview.text(type: message.msgType, content: message.content, revoked: message.revoked)
        revoked = message.revoked
    }

    init(msgId: String, fromId: String, msgType: MessageType, text: String, revoked: Bool) {
        self.msgId = msgId
        self.fromId = fromId
        self.msgType = msgType
        self.text = text
        self.revoked = revoked
    }

    /// The stored form: the wire's fields as a JSON object.
    var stored: String {
        JSONValue.object(
            JSONObject([
                ("msgId", .string(msgId)), ("fromId", .string(fromId)), ("msgType", .string(msgType.rawValue)),
                ("text", .string(text)), ("revoked", .bool(revoked)),
            ])
        ).serializedString
    }

    /// A stored quote; nil for anything else (a row edited by hand).
    init?(stored value: JSONValue) {
        guard case .string(let msgId)? = value["msgId"], case .string(let fromId)? = value["fromId"],
            let msgType = value["msgType"]?.stringValue.flatMap(MessageType.init(rawValue:)),
            case .string(let text)? = value["text"], case .bool(let revoked)? = value["revoked"]
        else { return nil }
        self.init(msgId: msgId, fromId: fromId, msgType: msgType, text: text, revoked: revoked)
    }
}

/// Who a group message mentions (`mentions` in the message's JSON and in a send): users by id, or everybody (`all`,
/// the group's owner and admins only). Mentioned members are pushed even when they muted the conversation, and their
/// summary says `mentioned` until they read past it.
public struct MessageMentions: Sendable, Hashable, Encodable {
    public var userIds: [String]
    public var all: Bool

    public static let maxUsers = 100

    public init(userIds: [String], all: Bool) {
        self.userIds = userIds
        self.all = all
    }

    var isEmpty: Bool { userIds.isEmpty && !all }
}
