/// Limits and windows of the messaging feature; `ParleyApp` builds it from the environment.
public struct MessagingConfiguration: Sendable {
    /// The largest request a send takes (`POST /api/im/messages`, the WebSocket's `send`): room for a forward of 50
    /// messages (`maxForwardBytes`) written as a string, plus `extra` and the other members.
    public static let maxSendRequestBytes = 256 * 1024

    /// `text` messages, the `text` of `richText` and drafts: at most this many characters.
    public var maxTextCharacters = 10_000
    /// `extra`, serialized: at most this many bytes.
    public var maxExtraBytes = 4096
    /// `custom`, `richText`, `notify`-like and call contents, serialized: at most this many bytes.
    public var maxCustomBytes = 16 * 1024
    /// `forward`: at most this many messages, and `maxForwardBytes` serialized.
    public var maxForwardMessages = 50
    public var maxForwardBytes = 128 * 1024
    public var groupMemberLimit = 2000
    /// Senders may revoke their messages for this long (seconds); apps may override it.
    public var revokeWindowSeconds = 120
    /// Senders may edit text and richText messages for this long (seconds).
    public var editWindowSeconds = 24 * 3600
    /// Messages per second one user may send (REST and WebSocket together), counted by each instance for itself;
    /// 0: unlimited. `sendBurst` is how many may go at once above the rate.
    public var sendRatePerSecond: Double = 20
    public var sendBurst = 100
    /// Sync's changes log (read marks, revokes, edits, per-user changes) is kept this many days.
    public var syncRetentionDays = 30
    /// How often the coordinator keeps sync's change log (migrations/0041); zero: never on this instance.
    public var syncMaintenanceInterval: Duration = .seconds(600)
    /// Most friends per user (a request or accept that would exceed it on either side answers 1126).
    public var maxFriends = 5000
    /// Most users one user may block (1128 beyond).
    public var maxBlocks = 1000

    public init() {}
}
