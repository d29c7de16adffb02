import ParleyHTTP
import ParleyJSON

/// Which message a revoke names: its id (`{msgId}`), or the caller's own `clientMsgId` in a conversation
/// (`{conversationId, clientMsgId}`, seed 000's `revokeMessage(conversationID:clientMsgID:)`).
public enum RevokeTarget: Sendable, Hashable {
    case id(Int64)
    case clientMsgId(conversationId: String, clientMsgId: String)

    /// From a request body or a frame's `data` (`prefix` names it in messages, e.g. "data."): `msgId` (a string or
    /// a number), or both `conversationId` and `clientMsgId`; anything else is 1002 naming the field.
    public init(_ object: JSONObject, prefix: String) throws(APIError) {
        // Every field given is checked, whichever decides: `msgId` when present, else the other two.
        func string(_ key: String) throws(APIError) -> String? {
            switch object[key] {
            case nil: return nil
            case .string(let value)?: return value
            default: throw APIError.validationFailed.with(message: "`\(prefix)\(key)` must be a string")
            }
        }
        let conversationId = try string("conversationId").map { id throws(APIError) in
            try MessagingInput.conversationID(id).id
        }
        let clientMsgId = try string("clientMsgId").map { id throws(APIError) in try MessagingInput.clientMsgID(id) }
        switch object["msgId"] {
        case .string(let id)?:
            self = .id(try MessagingInput.messageID(id))
        case .number(let number)?:
            self = .id(try MessagingInput.messageID(number.text))
        case nil:
            guard let conversationId, let clientMsgId else {
                throw APIError.validationFailed.with(
                    message: "give `\(prefix)msgId`, or `\(prefix)conversationId` and `\(prefix)clientMsgId`")
            }
            self = .clientMsgId(conversationId: conversationId, clientMsgId: clientMsgId)
        default:
            throw APIError.validationFailed.with(message: "`\(prefix)msgId` must be a message id")
        }
    }
}
