/// Sends every message back as it came: the dev-only `/ws/echo` route the Autobahn suite drives, and the
/// live tests. Reading pauses while echoes are backpressured, so a fast sender cannot overflow the queue.
public final class WebSocketEchoHandler: WebSocketSessionHandler {
    /// Autobahn sends messages up to 16 MiB (cases 9.x); everything else stays at the defaults.
    public static var configuration: WebSocketConfiguration {
        var config = WebSocketConfiguration()
        config.maxFrameBytes = 16 << 20
        config.maxMessageBytes = 16 << 20
        config.maxBufferedOutgoingBytes = 40 << 20
        return config
    }

    public init() {}

    public func textReceived(_ text: String, session: WebSocketSession) {
        if session.send(text: text) == .backpressured { session.pauseReading() }
    }

    public func binaryReceived(_ bytes: [UInt8], session: WebSocketSession) {
        if session.send(binary: bytes) == .backpressured { session.pauseReading() }
    }

    public func sessionWritable(_ session: WebSocketSession) {
        session.resumeReading()
    }
}
