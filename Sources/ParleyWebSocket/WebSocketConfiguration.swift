/// Limits and timings of WebSocket sessions; one value per route.
public struct WebSocketConfiguration: Sendable {
    /// Largest frame payload; a bigger frame is refused from its header (1009) before it is buffered.
    public var maxFrameBytes: Int = 1 << 20
    /// Largest message, summed over its fragments (1009).
    public var maxMessageBytes: Int = 1 << 20
    /// Unsent bytes (our queue plus the connection's output buffer) past which the peer counts as stalled:
    /// the queue is dropped and the session closed with 4000 (`slowConsumer`). Keep it above
    /// `maxMessageBytes` plus the HTTP server's `maxPendingOutputBytes` high-water mark (1 MiB).
    public var maxBufferedOutgoingBytes: Int = 4 << 20
    /// Ping a peer that has sent nothing for this long; nil disables heartbeats.
    public var pingInterval: Duration? = .seconds(30)
    /// Unanswered pings in a row after which the session is closed with 4001 (`heartbeatTimeout`).
    public var missedPongLimit: Int = 2
    /// How long to wait for the peer's Close after ours before closing TCP anyway.
    public var closeTimeout: Duration = .seconds(5)
    /// Subprotocols this route speaks; the first one the client offers (in its order) is chosen.
    public var subprotocols: [String] = []
    /// Counters and gauges; nil records nothing.
    public var metrics: WebSocketMetrics?

    public init() {}

    var stateMachine: WebSocketConnectionStateMachine.Configuration {
        var config = WebSocketConnectionStateMachine.Configuration()
        config.maxMessageBytes = maxMessageBytes
        config.pingInterval = pingInterval
        config.missedPongLimit = missedPongLimit
        config.closeTimeout = closeTimeout
        return config
    }
}
