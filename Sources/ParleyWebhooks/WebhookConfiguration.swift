/// Settings of webhooks (`PARLEY_WEBHOOK_*`, read by ParleyApp's Configuration).
public struct WebhookConfiguration: Sendable {
    /// Whether URLs may resolve to loopback, private or link-local addresses (PARLEY_WEBHOOK_ALLOW_PRIVATE, off).
    public var allowPrivateAddresses = false
    /// Attempts of an event before it goes dead (PARLEY_WEBHOOK_MAX_ATTEMPTS, 10); the next event of its key
    /// then proceeds.
    public var maxAttempts = 10
    /// How often each instance looks for due events (PARLEY_WEBHOOK_POLL_MS, 250 ms); zero: this instance
    /// delivers none (every instance still queues them, with the change).
    public var pollInterval: Duration = .milliseconds(250)
    /// Delivered and dead events are kept this long for the admin API, then deleted
    /// (PARLEY_WEBHOOK_RETENTION_HOURS, 24).
    public var retentionHours = 24
    /// How long a leased event is left to its worker; after a crash another instance takes it over. More than twice
    /// the longest timeout an app may set (a run starts no call past half of it).
    public var leaseSeconds = 30
    /// Keys leased at once, events leased per key (delivered one after another, in order), and keys delivered
    /// at once per instance.
    public var keysPerLease = 100
    public var eventsPerKey = 50
    public var concurrentDeliveries = 16
    /// Retry delays: 1 s, 2 s, 4 s, ... at most `maxBackoff`.
    public var firstBackoff: Duration = .seconds(1)
    public var maxBackoff: Duration = .seconds(300)
    /// How often the settings cache reloads every app's settings (a backstop under NOTIFY).
    public var settingsRefreshInterval: Duration = .seconds(30)

    public init() {}

    /// The delay before attempt `attempts + 1` after `attempts` failed ones: 1 s, 2 s, 4 s, ... capped.
    public func backoff(afterAttempts attempts: Int) -> Duration {
        let exponent = max(0, min(attempts - 1, 30))
        return min(firstBackoff * (1 << exponent), maxBackoff)
    }
}
