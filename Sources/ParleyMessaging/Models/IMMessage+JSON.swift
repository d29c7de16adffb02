import Foundation
import ParleyHTTP
import ParleyJSON

extension IMMessage {
    /// The message's JSON, written once per send for the answer and the realtime frame alike, by the encoder every
    /// model goes through (the wire form of `encode(to:)`, as on every other path).
    public func jsonBytes() -> [UInt8] {
        // Cannot fail: no floating-point field, and dates are written without throwing.
        (try? JSONCoding.bytesEncoder.encode(self)) ?? Array("null".utf8)
    }
}

extension MessageService.SendRequest {
    /// Parses a send request body with ParleyJSON (no Foundation decoding on the hot path); 1001 for a body
    /// that is not JSON, 1002 naming the field for a missing or mistyped one.
    public static func parse(_ bytes: [UInt8]) throws(APIError) -> MessageService.SendRequest {
        try MessageService.SendRequest(try HTTPRequest.jsonObject(bytes), prefix: "")
    }

    /// From an already parsed object (`prefix` names it in messages, e.g. "data." for a WebSocket frame).
    public init(_ object: JSONObject, prefix: String) throws(APIError) {
        func string(_ key: String) throws(APIError) -> String {
            switch object[key] {
            case .string(let value)?: return value
            case nil, .null?: throw APIError.validationFailed.with(message: "missing field `\(prefix)\(key)`")
            default: throw APIError.validationFailed.with(message: "wrong type for `\(prefix)\(key)`")
            }
        }
        let toId = try string("toId")
        let chatType = try string("chatType")
        let msgType = try string("msgType")
        guard let content = object["content"], !content.isNull else {
            throw APIError.validationFailed.with(message: "missing field `\(prefix)content`")
        }
        // Optional: the 001 SDK's `SendMessageParams` has none (such a send is never deduplicated).
        let clientMsgId: String?
        switch object["clientMsgId"] {
        case nil, .null?: clientMsgId = nil
        case .string(let value)?: clientMsgId = value
        default: throw APIError.validationFailed.with(message: "wrong type for `\(prefix)clientMsgId`")
        }
        let noUnread: Bool
        switch object["noUnread"] {
        case nil, .null?: noUnread = false
        case .bool(let value)?: noUnread = value
        default: throw APIError.validationFailed.with(message: "wrong type for `\(prefix)noUnread`")
        }
        self.init(
            toId: toId, chatType: chatType, msgType: msgType, content: content, extra: object["extra"],
            clientMsgId: clientMsgId, push: try MessagePushOptions.parse(object["push"], prefix: prefix),
            noUnread: noUnread)
        switch object["replyTo"] {
        case nil, .null?: replyTo = nil
        case .string(let id)?: replyTo = id
        case .number(let number)?: replyTo = number.text
        default: throw APIError.validationFailed.with(message: "`\(prefix)replyTo` must be a message id")
        }
        mentions = try MessageMentions.parse(object["mentions"], prefix: prefix)
    }
}

extension MessageMentions {
    /// `{"userIds": [...], "all": bool}`, both optional; nil when absent or mentioning nobody. Ids are checked and
    /// kept once each, in the order given.
    static func parse(_ value: JSONValue?, prefix: String) throws(APIError) -> MessageMentions? {
        let field = "\(prefix)mentions"
        switch value {
        case nil, .null?: return nil
        case .object(let object)?:
            for key in object.keys where key != "userIds" && key != "all" {
                throw APIError.validationFailed.with(message: "unknown field `\(field).\(key)`")
            }
            var all = false
            switch object["all"] {
            case nil, .null?: break
            case .bool(let value)?: all = value
            default: throw APIError.validationFailed.with(message: "`\(field).all` must be a boolean")
            }
            var userIds: [String] = []
            switch object["userIds"] {
            case nil, .null?: break
            case .array(let items)?:
                guard items.count <= maxUsers else {
                    throw APIError.validationFailed.with(message: "`\(field).userIds` holds at most \(maxUsers) ids")
                }
                var seen = Set<String>()
                for item in items {
                    guard case .string(let raw) = item else {
                        throw APIError.validationFailed.with(message: "`\(field).userIds` must hold user ids")
                    }
                    let id = try MessagingInput.userID(raw, field: "\(field).userIds")
                    if seen.insert(id).inserted { userIds.append(id) }
                }
            default: throw APIError.validationFailed.with(message: "`\(field).userIds` must be an array")
            }
            let mentions = MessageMentions(userIds: userIds, all: all)
            return mentions.isEmpty ? nil : mentions
        default:
            throw APIError.validationFailed.with(message: "`\(field)` must be an object")
        }
    }
}
