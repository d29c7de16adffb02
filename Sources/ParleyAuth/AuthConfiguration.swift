import ParleyCrypto

/// Everything the auth feature is configured with; `ParleyApp` builds it from the environment.
public struct AuthConfiguration: Sendable {
    public var masterKey: MasterKey
    /// The key being rotated away from (`PARLEY_PREVIOUS_MASTER_KEY`): what it sealed still opens and the tokens it
    /// signed still verify, until `parley rotate-master-key` has resealed everything and it is dropped.
    public var previousMasterKey: MasterKey?
    public var tokenKeys: TokenKeyRing
    /// Server-wide token lifetimes in seconds (apps may override them).
    public var lifetimes = TokenLifetimes(access: 15 * 60, refresh: 30 * 24 * 3600, im: 24 * 3600)
    /// Auth requests per minute per client address (0: unlimited).
    public var addressRatePerMinute = 120
    /// Auth requests per minute per account (login attempts by username, token renewals by user; 0: unlimited).
    public var accountRatePerMinute = 30
    /// Registrations per hour per client address (IPv6 by /64) and app, across instances (0: unlimited).
    public var registrationsPerHour = 20
    /// Failed logins per account and source (client address, or a device that had a session) before each further
    /// attempt waits `loginFirstDelay`, twice that, ... up to `loginFailureWindow`; the account as a whole allows ten sources' worth.
    public var maxLoginFailures = 10
    /// How long a quiet source's failures are remembered after its last delay, and the longest delay (seconds).
    public var loginFailureWindow = 15 * 60
    /// The first delay past the allowance (seconds); each further failure doubles it.
    public var loginFirstDelay = 1
    public var trustedProxies = TrustedProxies.none
    /// Threads hashing passwords (scrypt) off the event loops.
    public var passwordHashThreads = 2
    public var passwordParameters = PasswordHasher.Parameters.default
    /// Signed server-to-server requests: allowed clock difference (the "within 5 minutes").
    public var signatureWindow = 300
    /// How often each instance polls for ended sessions and changed apps (a missed NOTIFY costs at most this).
    public var pollInterval: Duration = .seconds(1)
    /// How long a deleted account's username stays reserved before it may be registered again (days; 0: freed at
    /// once).
    public var usernameGraceDays = 30
    /// How often each instance adds what it counted (active users, stored messages) to the admin API's statistics.
    public var statisticsFlushInterval: Duration = .seconds(10)
    /// How long the previous app secret keeps verifying after `rotate-secret` (seconds).
    public var secretRotationGrace = 3600

    public init(masterKey: MasterKey, previousMasterKey: MasterKey? = nil, tokenKeys: TokenKeyRing? = nil) {
        self.masterKey = masterKey
        self.previousMasterKey = previousMasterKey
        self.tokenKeys = tokenKeys ?? TokenKeyRing(derivedFrom: masterKey, previous: previousMasterKey)
    }

    /// What seals and opens stored secrets under the master key (and the previous one during a rotation).
    public var sealer: MasterKeySealer { MasterKeySealer(current: masterKey, previous: previousMasterKey) }
}
