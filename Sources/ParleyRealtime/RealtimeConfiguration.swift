import ParleyWebSocket

/// Settings of the WebSocket gateway; `ParleyApp` builds it from the environment.
public struct RealtimeConfiguration: Sendable {
    /// Frame and message limits (1009 past them), heartbeat (ping every 30 s, close 4001 after two misses),
    /// and the outgoing bound per connection (close 4000 past it).
    public var webSocket: WebSocketConfiguration = {
        var config = WebSocketConfiguration()
        config.maxFrameBytes = 1 << 20
        config.maxMessageBytes = 1 << 20
        config.maxBufferedOutgoingBytes = 4 << 20
        config.pingInterval = .seconds(30)
        config.missedPongLimit = 2
        return config
    }()
    /// Requests of one connection waiting for their answer beyond which the gateway stops reading from it
    /// (they are handled one at a time, in order).
    public var maxPendingRequests = 64
    /// `typing` notices forwarded per connection and second; more are acknowledged and dropped.
    public var typingPerSecond = 2
    /// NOTIFY channel shared by the instances of one deployment.
    public var clusterChannel = "parley_realtime"

    public init() {}
}
