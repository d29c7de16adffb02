/// Settings of calls (README's settings table).
public struct CallConfiguration: Sendable {
    /// PARLEY_CALL_SWEEP_MS: how often this instance ends the callees whose invitation timed out (0: never; the
    /// other instances still do).
    public var sweepInterval: Duration = .milliseconds(500)
    /// PARLEY_TURN_SECRET: coturn's `static-auth-secret`; with PARLEY_TURN_URIS, `GET /api/calls/turn` answers.
    public var turnSecret: String?
    /// PARLEY_TURN_URIS: comma-separated `turn:` / `turns:` / `stun:` URIs handed to clients.
    public var turnURIs: [String] = []
    /// PARLEY_TURN_TTL_SECONDS.
    public var turnTTLSeconds = 86_400
    /// Ended calls are deleted this long after their end (their records stay in the conversations).
    public var retentionHours = 24

    public static let maxParticipants = 9
    public static let maxUserDataBytes = 4096
    public static let defaultTimeoutSeconds = 30
    public static let maxTimeoutSeconds = 120

    public init() {}
}
