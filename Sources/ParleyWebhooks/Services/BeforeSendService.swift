import Foundation
import ParleyHTTP
import ParleyJSON
import ParleyMessageModel
import ParleyNet
import ParleyObservability

/// `before_send`: asks the app's backend about a message a user is sending, within the app's timeout, and turns
/// the answer into a verdict, or the refusal the sender gets. A failure (timeout, refused connection, an error
/// status, an answer that is not one) follows the app's `on_failure`: allow, or refuse with 1601.
public struct BeforeSendService: Sendable {
    let settings: WebhookSettingsCache
    let caller: WebhookCaller
    let metrics: WebhookMetrics
    let logger: Logger

    /// Whether the app has before_send now (memory only).
    public func isActive(appId: Int64) -> Bool { settings.wants(.beforeSend, appId: appId) }

    /// The backend's verdict on `message`; throws 1600 (denied, with the backend's code and message) or 1601.
    public func consult(_ message: BeforeSendHook.Message) async throws -> BeforeSendHook.Verdict {
        let appId = message.appId
        guard let current = settings.settings(appId: appId), current.wants(.beforeSend),
            let appKey = caller.appKey(of: appId)
        else { return .allow }
        let started = ContinuousClock.now
        let eventId = "bs_" + WebhookSigner.newNonce()
        let data = JSONValue.object(JSONObject([("message", Self.json(message))])).serialized()
        let body = WebhookCaller.envelope(
            eventId: eventId, event: WebhookEvent.beforeSend.rawValue, appKey: appKey, createdAt: Date(), attempt: 1,
            data: data)
        let answer: BeforeSendAnswer
        switch await caller.call(current, event: WebhookEvent.beforeSend.rawValue, eventId: eventId, body: body) {
        case .success(let response): answer = BeforeSendAnswer.parse(status: response.status, body: response.body)
        case .failure(let failure): answer = .invalid(failure.description)
        }
        let outcome: String
        defer {
            metrics.beforeSendSeconds.labels(outcome).observe((ContinuousClock.now - started).secondsDouble)
            metrics.beforeSendOutcomes.labels(outcome).increment()
        }
        switch answer {
        case .allow:
            outcome = "allow"
            return .allow
        case .replace(let content, let extra):
            outcome = "replace"
            return .replace(content: content, extra: extra)
        case .deny(let code, let text):
            outcome = "deny"
            throw APIError.messageDenied(code: code, message: text)
        case .invalid(let reason):
            logger.warning(
                "before_send failed",
                [
                    "app_id": .int(Int(appId)), "reason": .string(reason),
                    "policy": .string(current.onFailure.rawValue),
                ])
            switch current.onFailure {
            case .allow:
                outcome = "failed_allow"
                return .allow
            case .deny:
                outcome = "failed_deny"
                throw APIError.beforeSendUnavailable
            }
        }
    }
}

extension BeforeSendService {
    /// The message as the backend gets it (`data.message` of the call).
    static func json(_ message: BeforeSendHook.Message) -> JSONValue {
        .object(
            JSONObject([
                ("fromId", .string(message.fromId)), ("toId", .string(message.toId)),
                ("chatType", .string(message.chatType)), ("msgType", .string(message.msgType)),
                ("content", message.content), ("extra", message.extra ?? .null),
                ("clientMsgId", message.clientMsgId.map { .string($0) } ?? .null),
            ]))
    }
}
