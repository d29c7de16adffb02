import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel

extension MessageService {
    /// A message's type, client id, content and extra as `send` checks them: one set of rules for every path that
    /// carries a message (chat rooms store theirs elsewhere).
    public struct CheckedContent: Sendable {
        public var msgType: MessageType
        public var clientMsgId: String?
        public var contentValue: JSONValue
        /// The JSON text stored.
        public var content: [UInt8]
        public var extraValue: JSONValue?
        public var extra: [UInt8]?

        /// `content` as clients get it (see `IMMessage.wireContent`).
        public var wireContent: String { IMMessage.wireText(contentValue) ?? "" }
        public var wireExtra: String? { extraValue.flatMap(IMMessage.wireText) }
    }

    func checkedContent(_ request: SendRequest) throws(APIError) -> CheckedContent {
        guard let msgType = MessageType(rawValue: request.msgType) else {
            throw APIError.validationFailed.with(
                message: "`msgType` must be one of "
                    + MessageType.allCases.filter(\.isClientSendable).map(\.rawValue).joined(separator: ", "))
        }
        let clientMsgId = try request.clientMsgId.map { id throws(APIError) in try MessagingInput.clientMsgID(id) }
        if request.noUnread && msgType != .custom {
            throw APIError.validationFailed.with(message: "`noUnread` is for custom messages only")
        }
        let contentValue = try MessageContentInput.value(msgType, request.content)
        let content = try validator.validate(msgType, contentValue)
        return CheckedContent(
            msgType: msgType, clientMsgId: clientMsgId, contentValue: contentValue, content: content,
            extraValue: request.extra, extra: try validator.validateExtra(request.extra))
    }

    /// What a chat room message must pass before it is stored: the sender's send rate (the same bucket as `send`),
    /// the content rules and the check of the files it references. `chatType` and `toId` are the caller's.
    public func checkRoomMessage(_ request: SendRequest, from principal: Principal) async throws -> CheckedContent {
        if sendRate.isEnabled, let wait = sendRate.acquire(SenderKey(appId: principal.appId, userId: principal.userId))
        {
            refusals.count(.sendRate)
            throw APIError.sendRateLimited(retryAfterSeconds: wait)
        }
        let checked = try checkedContent(request)
        if let attachments {
            let keys = try MessageContentValidator.objectKeys(checked.msgType, checked.contentValue)
            if !keys.isEmpty { try await attachments(keys, principal.appId, principal.userId) }
        }
        return checked
    }
}
