import Foundation
import ParleyHTTP
import ParleyLifecycle
import ParleyNet
import ParleyObservability
import ParleyPostgres

/// The auth and tenancy feature, assembled: what `ParleyApp` registers and runs.
///
/// - `register(on:)` adds the routes; `registerBenchmarkRoutes(on:)` the dev-only ones.
/// - `backgroundServices` load apps and recently ended sessions, keep them in sync, and run the password-hashing
///   threads.
/// - `authenticator` protects routes of later features; `events` tells the realtime gateway which sessions
///   ended (and why).
public final class AuthModule: Sendable {
    public let configuration: AuthConfiguration
    public let authenticator: Authenticator
    public let events: SessionEvents
    public let revocations: SessionRevocations
    public let directory: AppDirectory
    public let appRepository: AppRepository
    public let secrets: AppSecretBox
    /// The admin API's statistics: where messaging counts stored messages and the gateway active users.
    public let statistics: AdminStatistics
    let services: AuthServices
    let sync: AuthSyncService

    public init(configuration: AuthConfiguration, database: PostgresClient, logger: Logger, metrics: MetricsRegistry) {
        self.configuration = configuration
        let logger = logger.with("component", "auth")
        let directory = AppDirectory()
        let revocations = SessionRevocations()
        let events = SessionEvents()
        let consents = ConsentCache()
        let appRepository = AppRepository(database: database)
        let users = UserRepository(database: database)
        let tokens = TokenService(keys: configuration.tokenKeys)
        let apps = AppResolver(directory: directory, repository: appRepository)
        let statistics = AdminStatistics(
            database: database, flushInterval: configuration.statisticsFlushInterval, logger: logger)
        self.statistics = statistics
        let sessions = SessionService(
            sessions: SessionRepository(database: database), users: users, tokens: tokens,
            revocations: revocations, events: events, defaults: configuration.lifetimes,
            activeUsers: statistics.activeUsers, logger: logger)
        let authenticator = Authenticator(
            tokens: tokens, directory: directory, revocations: revocations,
            consents: consents, users: users, apps: apps, lifetimes: configuration.lifetimes)
        let secrets = AppSecretBox(sealer: configuration.sealer)
        let throttles = LoginThrottleRepository(database: database)
        services = AuthServices(
            configuration: configuration, apps: apps, users: users, throttles: throttles,
            registrations: RegistrationThrottleRepository(database: database), sessions: sessions,
            authenticator: authenticator,
            consents: consents,
            limits: AuthRateLimits(
                addressPerMinute: configuration.addressRatePerMinute,
                accountPerMinute: configuration.accountRatePerMinute,
                proxies: configuration.trustedProxies),
            passwords: PasswordHashingPool(threads: configuration.passwordHashThreads),
            dummyHash: DummyPasswordHash(),
            signatures: SignedRequestVerifier(
                apps: apps, secrets: secrets, nonces: NonceRepository(database: database),
                window: configuration.signatureWindow),
            refusals: QuotaRefusals(metrics: metrics),
            logger: logger)
        sync = AuthSyncService(
            apps: appRepository, directory: directory, sessions: sessions, throttles: throttles,
            revocations: revocations,
            configuration: configuration, logger: logger)
        self.authenticator = authenticator
        self.events = events
        self.revocations = revocations
        self.directory = directory
        self.appRepository = appRepository
        self.secrets = secrets
    }

    /// The account deletion flow (`DELETE /api/users/me`, the admin API), with the parts other features play in it.
    public func accountDeletion(participants: [AccountDeletionParticipant]) -> AccountDeletion {
        AccountDeletion(
            users: services.users, sessions: services.sessions, participants: participants,
            usernameGraceDays: configuration.usernameGraceDays, logger: services.logger)
    }

    /// Frees the usernames of accounts deleted longer than `PARLEY_AUTH_USERNAME_GRACE_DAYS` before `now` (what the
    /// hourly sweep runs); returns how many.
    public func freeDeletedUsernames(now: Date = Date()) async throws -> Int {
        try await services.users.freeDeletedUsernames(
            deletedBefore: now.addingTimeInterval(-TimeInterval(configuration.usernameGraceDays) * 86_400))
    }

    /// - Parameters:
    ///   - avatars: the file service's avatar check (see `AvatarAuthorizer`).
    ///   - deletion: the account deletion flow `DELETE /api/users/me` runs (without one, auth's own part only: the
    ///     sessions and the profile; tests that build auth alone).
    ///   - profileChanges: messaging's `profile` event (see `ProfileChangeRecorder`).
    ///   - statistics: the other features' parts of `GET /api/admin/stats`.
    public func register(
        on router: inout Router, avatars: AvatarAuthorizer? = nil, deletion: AccountDeletion? = nil,
        profileChanges: ProfileChangeRecorder? = nil, statistics contributors: [StatisticsContributor] = []
    ) {
        var services = services
        services.avatars = avatars
        services.deletion = deletion ?? accountDeletion(participants: [])
        services.profileChanges = profileChanges
        AuthController(services: services).register(on: &router)
        SessionController(services: services).register(on: &router)
        IMAuthController(services: services).register(on: &router)
        UserController(services: services).register(on: &router)
        PrivacyController(services: services).register(on: &router)
        AdminUserController(services: services, statistics: statistics, contributors: contributors)
            .register(on: &router)
    }

    /// `/bench/auth-echo` and `/bench/echo` (PARLEY_DEV_ROUTES=1 only).
    public func registerBenchmarkRoutes(on router: inout Router) {
        AuthBenchController(services: services).register(on: &router)
    }

    /// What auth runs while the server serves, in start order: the session-event bus (closed last), the
    /// password-hashing threads with the dummy hash unknown users' logins are checked against, the sync service
    /// (apps and recently ended sessions are loaded before anything serves), the statistics' flush (the last one
    /// when auth stops, after every feature that counts), the poll, and the hourly sweep
    /// that frees deleted accounts' usernames after their grace period (the coordinator's: it is idempotent).
    public func backgroundServices(coordinator: CoordinatorRole) -> [any Service] {
        let events = events
        let services = services
        let configuration = configuration
        let sync = sync
        return [
            ResourceService("session events", stop: { events.finish() }),
            ResourceService(
                "password hashing",
                start: {
                    services.passwords.start()
                    try await services.dummyHash.prepare(
                        parameters: configuration.passwordParameters, pool: services.passwords)
                }, stop: { services.passwords.shutdown() }),
            sync,
        ] + statistics.services + [
            PeriodicService("auth poll", every: configuration.pollInterval) { await sync.poll() },
            PeriodicService(
                "deleted usernames", every: .seconds(3600), firstAfter: .seconds(60), on: .coordinator(coordinator)
            ) { [self] in
                do {
                    let freed = try await freeDeletedUsernames()
                    if freed > 0 { services.logger.info("deleted accounts' usernames freed", ["count": .int(freed)]) }
                } catch {
                    services.logger.warning(
                        "freeing deleted accounts' usernames failed", ["error": .string(String(describing: error))])
                }
            },
        ]
    }
}
