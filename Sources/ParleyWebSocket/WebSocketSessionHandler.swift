import ParleyHTTP
import ParleyObservability

/// The application side of a WebSocket session: the echo route today, the IM gateway next.
///
/// Loop-confined: every call happens on the session's event-loop thread, one at a time, so a handler
/// needs no locks for its own state. Sending from elsewhere goes through `session.handle`.
public protocol WebSocketSessionHandler: AnyObject {
    /// The handshake is complete; the session can send at once (e.g. a hello).
    func sessionOpened(_ session: WebSocketSession)
    /// A complete, valid UTF-8 text message.
    func textReceived(_ text: String, session: WebSocketSession)
    /// A complete binary message.
    func binaryReceived(_ bytes: [UInt8], session: WebSocketSession)
    /// Everything queued has been handed to the socket, after a send answered `.backpressured`.
    func sessionWritable(_ session: WebSocketSession)
    /// The session ended; the last call. `code` is the peer's close code if it sent one (1005 for a Close
    /// without a code), else the one we sent, else 1006 (the connection just ended).
    func sessionClosed(_ session: WebSocketSession, code: WebSocketCloseCode, reason: String)
}

extension WebSocketSessionHandler {
    public func sessionOpened(_ session: WebSocketSession) {}
    /// By default a message type the protocol does not use is refused with 1003 (RFC 6455 §7.4.1).
    public func textReceived(_ text: String, session: WebSocketSession) {
        session.close(code: .unsupportedData, reason: "text messages are not accepted")
    }
    public func binaryReceived(_ bytes: [UInt8], session: WebSocketSession) {
        session.close(code: .unsupportedData, reason: "binary messages are not accepted")
    }
    public func sessionWritable(_ session: WebSocketSession) {}
    public func sessionClosed(_ session: WebSocketSession, code: WebSocketCloseCode, reason: String) {}
}

/// What the handshake request told us, for the handler's factory.
public struct WebSocketSessionContext: Sendable {
    /// The upgrade request's line and headers.
    public var head: HTTPRequestHead
    public var remoteAddress: String
    /// The negotiated subprotocol, if any.
    public var subprotocol: String?
    public var logger: Logger?

    public init(head: HTTPRequestHead, remoteAddress: String, subprotocol: String? = nil, logger: Logger? = nil) {
        self.head = head
        self.remoteAddress = remoteAddress
        self.subprotocol = subprotocol
        self.logger = logger
    }
}

/// The outcome of a send.
public enum WebSocketSendResult: Sendable, Hashable {
    /// Handed to the connection, which is below its high-water mark: keep sending.
    case accepted
    /// Accepted, but the peer is slow: stop producing until `sessionWritable`. Past
    /// `maxBufferedOutgoingBytes` the session is closed with 4000 instead.
    case backpressured
    /// Not sent: the session is closing or closed (or this send overflowed the queue).
    case dropped
}
