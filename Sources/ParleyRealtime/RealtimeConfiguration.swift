import ParleyMessaging
import ParleyNATS
import ParleyWebSocket

/// Settings of the WebSocket gateway; `ParleyApp` builds it from the environment.
public struct RealtimeConfiguration: Sendable {
    /// The largest frame a client needs: a `send` as large as `POST /api/im/messages` accepts (a forward of 50
    /// messages with its extra), plus room for the frame's own members (`type`, a 128-byte `reqId`).
    public static let defaultMaxMessageBytes = MessagingConfiguration.maxSendRequestBytes + 4096

    /// Frame and message limits (1009 past them), heartbeat (ping every 30 s, close 4001 after two misses),
    /// and the outgoing bound per connection (close 4000 past it).
    public var webSocket: WebSocketConfiguration = {
        var config = WebSocketConfiguration()
        config.maxFrameBytes = defaultMaxMessageBytes
        config.maxMessageBytes = defaultMaxMessageBytes
        config.maxBufferedOutgoingBytes = 4 << 20
        config.pingInterval = .seconds(30)
        config.missedPongLimit = 2
        return config
    }()
    /// Requests of one connection waiting for their answer beyond which the gateway stops reading from it
    /// (they are handled one at a time, in order).
    public var maxPendingRequests = 64
    /// Bytes of request frames one connection may have waiting (the one being answered included); past them it is
    /// closed with 4004. At least `webSocket.maxMessageBytes`, so that any one frame fits.
    public var maxPendingRequestBytes = 2 << 20
    /// Sockets of one session past which a newer one makes the session's oldest prove they are alive: each is pinged,
    /// and closed with 4001 unless it answers within `socketProbeTimeout`. A device reconnecting over a flaky network
    /// leaves dead sockets behind that this reaps long before their heartbeat fails, while a session's live sockets
    /// stay: one login may serve several (seed 001's SDK opens one per screen, and its devices share a session).
    /// At or above `maxConnectionsPerSession` it never applies: the hard limit closes first.
    public var probeConnectionsPerSession = 4
    /// How long a probed socket has to send any frame (its pong) before it is closed with 4001.
    public var socketProbeTimeout: Duration = .seconds(10)
    /// Sockets one session may hold, live or not; a newer one closes the oldest with 4502.
    public var maxConnectionsPerSession = 16
    /// `typing` notices forwarded per connection and second; more are acknowledged and dropped.
    public var typingPerSecond = 2
    /// A `presence` event frame goes to each subscriber connection at most once per this window, carrying the
    /// latest status of every watched user that changed in it. Frames, not changes, set presence's cost (a user
    /// watching 200 others sees one of them change every 0.3 s at one change per user per minute): 3 s keeps 10,000
    /// users watching 200 each under a tenth of a core (BENCHMARKS.md), 1 s took a sixth.
    public var presenceCoalesceWindow: Duration = .milliseconds(3000)
    /// Distinct users the connections of one user may watch together (`presence_subscribe`).
    public var maxPresenceSubscriptions = 1000
    /// NOTIFY channel shared by the instances of one deployment.
    public var clusterChannel = "parley_realtime"
    /// How the instances of a deployment hear each other (`PARLEY_RELAY`).
    public var relay = Relay.postgres
    /// The NATS subjects' first tokens (`PARLEY_RELAY_SUBJECT_PREFIX`): deployments sharing NATS servers need
    /// their own.
    public var relaySubjectPrefix = "parley"

    public static func isValidRelaySubjectPrefix(_ prefix: String) -> Bool { RelaySubjects.isValidPrefix(prefix) }

    public enum Relay: Sendable {
        /// LISTEN/NOTIFY on the database (one moving part).
        case postgres
        /// NATS, routed by interest.
        case nats(NATSConfiguration)
    }
    /// Chat rooms (Rooms/).
    public var rooms = RoomConfiguration()

    public init() {}
}
