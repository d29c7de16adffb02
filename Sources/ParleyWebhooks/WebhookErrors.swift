import ParleyHTTP
import ParleyJSON

/// Webhooks' errors (1600-1619), documented in openapi.yaml.
extension APIError {
    /// The app's backend refused the message (`before_send` answered deny). `data` carries the backend's own code
    /// and message: `{"backendCode": <int|null>, "backendMessage": "..."}`.
    public static let messageDeniedByApp = APIError(
        code: 1600, status: 403, message: "the app refused this message")
    /// `before_send` failed (timeout, error, an answer that is not one) and the app's policy is to refuse then.
    public static let beforeSendUnavailable = APIError(
        code: 1601, status: 503, message: "the app's message check is unavailable; try again later")
    public static let webhookDeliveryNotFound = APIError(
        code: 1602, status: 404, message: "no such webhook delivery")
    /// Only a dead delivery can be retried (a pending one is retried anyway, a delivered one is done).
    public static let webhookDeliveryNotDead = APIError(
        code: 1603, status: 409, message: "only a dead delivery can be retried")
    public static let webhookNotConfigured = APIError(
        code: 1604, status: 404, message: "the app has no webhook configured")

    static func messageDenied(code: Int?, message: String?) -> APIError {
        var error = messageDeniedByApp
        if let message, !message.isEmpty { error.message = message }
        let data = JSONValue.object(
            JSONObject([
                ("backendCode", code.map { .number(JSONNumber($0)) } ?? .null),
                ("backendMessage", message.map { .string($0) } ?? .null),
            ]))
        error.data = data.serialized()
        return error
    }
}
