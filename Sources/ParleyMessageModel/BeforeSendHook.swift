import ParleyJSON

/// A check an app's own backend makes of each message a user sends, before it is stored (the `before_send`
/// webhook). Here, beside the message kinds, so that messaging (which consults it) and webhooks (which answers it)
/// share it without knowing each other; the composition root hands webhooks' hook to messaging. Only user sends
/// consult it; messages the server or an admin writes do not.
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

        public init(
            appId: Int64, fromId: String, toId: String, chatType: String, msgType: String, content: JSONValue,
            extra: JSONValue?, clientMsgId: String?
        ) {
            self.appId = appId
            self.fromId = fromId
            self.toId = toId
            self.chatType = chatType
            self.msgType = msgType
            self.content = content
            self.extra = extra
            self.clientMsgId = clientMsgId
        }
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
