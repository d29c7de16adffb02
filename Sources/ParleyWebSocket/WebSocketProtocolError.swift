/// A reason to fail the connection (RFC 6455 §7.1.7): the close code to send and a short reason.
public struct WebSocketProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    public var closeCode: WebSocketCloseCode
    /// Sent as the close reason; short, ASCII, never peer-controlled text.
    public var reason: String

    public init(closeCode: WebSocketCloseCode, reason: String) {
        self.closeCode = closeCode
        self.reason = reason
    }

    public var description: String { "WebSocket protocol error \(closeCode): \(reason)" }

    /// 1002: the peer broke the framing or the message rules.
    public static func protocolViolation(_ reason: String) -> WebSocketProtocolError {
        WebSocketProtocolError(closeCode: .protocolError, reason: reason)
    }

    /// 1007: a text message or close reason that is not UTF-8.
    public static func invalidUTF8(_ reason: String) -> WebSocketProtocolError {
        WebSocketProtocolError(closeCode: .invalidPayload, reason: reason)
    }

    /// 1009: over the configured frame or message size.
    public static func tooBig(_ reason: String) -> WebSocketProtocolError {
        WebSocketProtocolError(closeCode: .messageTooBig, reason: reason)
    }
}
