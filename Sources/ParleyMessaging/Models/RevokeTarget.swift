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
        switch object["msgId"] {
        case .string(let id)?:
            self = .id(try MessagingInput.messageID(id))
            return
        case .number(let number)?:
            self = .id(try MessagingInput.messageID(number.text))
            return
        case nil, .null?:
            break
        default:
            throw APIError.validationFailed.with(message: "`\(prefix)msgId` must be a message id")
        }
        guard case .string(let conversationId)? = object["conversationId"],
            case .string(let clientMsgId)? = object["clientMsgId"]
        else {
            throw APIError.validationFailed.with(
                message: "give `\(prefix)msgId`, or `\(prefix)conversationId` and `\(prefix)clientMsgId` (strings)")
        }
        self = .clientMsgId(
            conversationId: try MessagingInput.conversationID(conversationId).id,
            clientMsgId: try MessagingInput.clientMsgID(clientMsgId))
    }
}
