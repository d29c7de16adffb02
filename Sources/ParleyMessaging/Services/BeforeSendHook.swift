import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel

/// A check an app's own backend makes of each message a user sends, before it is stored (the `before_send`
/// webhook). The composition root hands it in, so messaging does not know webhooks. Only user sends consult it;
/// messages the server or an admin writes do not.
public struct BeforeSendHook: Sendable {
    /// A message about to be stored, as validated.
    public struct Message: Sendable {
        public var appId: Int64
        public var fromId: String
        public var toId: String
        public var chatType: String
        public var msgType: String
        public var content: JSONValue
        public var extra: JSONValue?
        public var clientMsgId: String?
    }

    /// What the backend decided, when it lets the message through (a refusal is the `APIError` `consult` throws).
    public enum Verdict: Sendable, Equatable {
        case allow
        /// Store this content instead (validated again, as a client's); `extra`: nil keeps the sent one, `.null`
        /// removes it.
        case replace(content: JSONValue?, extra: JSONValue?)
    }

    /// Whether the app has the hook, answered from memory without suspending: a send of an app without one costs
    /// one lookup more.
    public let isActive: @Sendable (_ appId: Int64) -> Bool
    /// Asks the backend; throws the error the sender gets when the message is refused.
    public let consult: @Sendable (Message) async throws -> Verdict

    public init(
        isActive: @escaping @Sendable (_ appId: Int64) -> Bool,
        consult: @escaping @Sendable (Message) async throws -> Verdict
    ) {
        self.isActive = isActive
        self.consult = consult
    }
}

extension MessageService {
    /// The content and extra to store after the app's backend saw them: unchanged, or its replacement validated
    /// again like a client's (so a backend cannot store what a client could not).
    func applyBeforeSend(
        _ hook: BeforeSendHook, principal: Principal, toId: String, chatType: ChatType, msgType: MessageType,
        clientMsgId: String?, content: (value: JSONValue, bytes: [UInt8]), extra: (value: JSONValue?, bytes: [UInt8]?)
    ) async throws -> (content: (value: JSONValue, bytes: [UInt8]), extra: (value: JSONValue?, bytes: [UInt8]?)) {
        let verdict = try await hook.consult(
            BeforeSendHook.Message(
                appId: principal.appId, fromId: principal.userId, toId: toId, chatType: chatType.rawValue,
                msgType: msgType.rawValue, content: content.value, extra: extra.value, clientMsgId: clientMsgId))
        guard case .replace(let newContent, let newExtra) = verdict else { return (content, extra) }
        var result = (content: content, extra: extra)
        if let newContent {
            let value = try MessageContentInput.value(msgType, newContent)
            result.content = (value, try validator.validate(msgType, value))
        }
        if let newExtra {
            result.extra = (newExtra.isNull ? nil : newExtra, try validator.validateExtra(newExtra))
        }
        return result
    }
}
