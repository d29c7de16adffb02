/// Settings of offline push (`PARLEY_PUSH_*`, read by ParleyApp's Configuration).
public struct PushConfiguration: Sendable {
    /// How often each instance looks for due jobs (PARLEY_PUSH_POLL_MS, 250 ms); zero: this instance delivers
    /// no pushes (every instance still queues them, with the message).
    public var pollInterval: Duration = .milliseconds(250)
    /// Attempts of a job before it is given up (PARLEY_PUSH_MAX_ATTEMPTS, 10).
    public var maxAttempts = 10
    /// How long a leased job is left to its worker; after a crash another instance takes it over then
    /// (PARLEY_PUSH_LEASE_SECONDS, 30).
    public var leaseSeconds = 30
    /// Jobs leased at once, and jobs processed concurrently.
    public var batchSize = 100
    public var concurrentJobs = 16
    /// Retry delays: 1 s, 2 s, 4 s, ... at most `maxBackoff`.
    public var firstBackoff: Duration = .seconds(1)
    public var maxBackoff: Duration = .seconds(300)
    /// Lifetime of an alert push at APNs when the device is offline (1 day); VoIP pushes live `voipTTLSeconds`.
    public var alertTTLSeconds = 86400
    public var voipTTLSeconds = 60
    /// Presence rows of instances silent for longer than this count as offline.
    public var presenceStaleSeconds = 15
    /// How often tokens of ended sessions are swept (a backstop under the session-end events).
    public var sweepInterval: Duration = .seconds(600)
    /// PEM of the certificate authorities the push client trusts instead of the system's (PARLEY_PUSH_CA_FILE,
    /// unset): for the TLS mock APNs in tests and for relays with a private CA. Apple's endpoints need it unset.
    public var caFile: String?

    public init() {}

    /// The delay before attempt `attempts + 1` after `attempts` failed ones: 1 s, 2 s, 4 s, ... capped.
    public func backoff(afterAttempts attempts: Int) -> Duration {
        let exponent = max(0, min(attempts - 1, 30))
        let delay = firstBackoff * (1 << exponent)
        return min(delay, maxBackoff)
    }
}
