import ParleyHTTP
import ParleyNet
import ParleyObservability

/// The entry point for WebSocket routes: validates the handshake, answers 101, and runs a session per
/// connection on the connection's own loop.
///
/// ```swift
/// router.get("/ws/echo") { request, context in
///     try WebSocketServer.upgrade(request, logger: context.logger) { _ in WebSocketEchoHandler() }
/// }
/// ```
/// Authenticate (and answer 401) before calling it: a refused request must not be upgraded.
public enum WebSocketServer {
    /// Answers an upgrade request: 101 with `Sec-WebSocket-Accept`, or throws 400/426 (codes 1200/1201)
    /// before anything is upgraded. `makeSession` runs on the connection's loop when the 101 goes out.
    public static func upgrade(
        _ request: HTTPRequest,
        configuration: WebSocketConfiguration = WebSocketConfiguration(),
        logger: Logger? = nil,
        makeSession: @escaping @Sendable (WebSocketSessionContext) -> any WebSocketSessionHandler
    ) throws(APIError) -> HTTPResponse {
        let handshake = try WebSocketHandshake.validate(request.head)
        let subprotocol = handshake.offeredSubprotocols.first { configuration.subprotocols.contains($0) }
        let context = WebSocketSessionContext(
            head: request.head, remoteAddress: request.remoteAddress,
            subprotocol: subprotocol, logger: logger)
        let upgrade = HTTPUpgrade { loop in
            let session = WebSocketSession(loop: loop, context: context, configuration: configuration)
            session.attach(makeSession(context))
            return WebSocketChannelHandler(session: session)
        }
        return WebSocketHandshake.response(for: handshake, subprotocol: subprotocol, upgrade: upgrade)
    }
}
