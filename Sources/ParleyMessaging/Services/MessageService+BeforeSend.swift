import ParleyAuth
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel

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
