import ParleyJSON

/// The app backend's answer to `before_send`, parsed from a 2xx response body:
/// `{"action":"allow"}`, `{"action":"deny","code":<int>,"message":"..."}`, or `{"action":"allow","content":...,
/// "extra":...}` (either member replaces what was sent; `"extra": null` removes it). Anything else is `.invalid`,
/// which the app's `on_failure` policy decides, like a timeout.
public enum BeforeSendAnswer: Sendable, Equatable {
    case allow
    case replace(content: JSONValue?, extra: JSONValue?)
    case deny(code: Int?, message: String?)
    case invalid(String)

    /// Longest backend message passed to the sender.
    static let maxMessageLength = 512

    public static func parse(status: Int, body: [UInt8]) -> BeforeSendAnswer {
        guard (200...299).contains(status) else { return .invalid("HTTP \(status)") }
        guard let document = try? JSONValue.parse(body), case .object(let object) = document else {
            return .invalid("the answer is not a JSON object")
        }
        switch object["action"]?.stringValue {
        case "allow":
            let content = object["content"]
            let extra = object["extra"]
            if content == nil && extra == nil { return .allow }
            if let content, content.isNull { return .invalid("`content` must not be null") }
            return .replace(content: content, extra: extra)
        case "deny":
            var code: Int?
            if let raw = object["code"] {
                guard let value = raw.int64Value, let int = Int(exactly: value) else {
                    return .invalid("`code` must be an integer")
                }
                code = int
            }
            var message: String?
            if let raw = object["message"], !raw.isNull {
                guard let text = raw.stringValue else { return .invalid("`message` must be a string") }
                message = String(text.prefix(maxMessageLength))
            }
            return .deny(code: code, message: message)
        default:
            return .invalid("`action` must be allow or deny")
        }
    }
}
