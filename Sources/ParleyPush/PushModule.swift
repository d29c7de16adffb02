import ParleyAuth
import ParleyHTTP
import ParleyLifecycle
import ParleyNet
import ParleyObservability
import ParleyPostgres

/// Push, assembled: the token routes, the outbox worker (with the sender that delivers), and the unbinding of
/// tokens when sessions end. Messages reach the outbox without this module: a trigger on `messages` queues them
/// in the sending transaction (migrations/0008), so messaging knows nothing of push.
public final class PushModule: Sendable {
    public let configuration: PushConfiguration
    public let tokens: PushTokenRepository
    public let settings: PushSettingsRepository
    public let vendorSettings: PushVendorSettingsRepository
    public let jobs: PushJobRepository
    public let attempts: PushAttemptRepository
    let worker: PushWorker
    let authenticator: Authenticator
    /// The admin API's check of server-to-server requests (`AuthModule.verifySignedRequest`).
    let verifySignedRequest: @Sendable (HTTPRequest) async throws -> AppSettings
    let endedSessions: AsyncStream<SessionEvent>
    let logger: Logger

    public init(
        configuration: PushConfiguration, database: PostgresClient, authenticator: Authenticator,
        sessionEvents: SessionEvents, keys: PushKeyBox, sender: any PushSender, fcmSender: FCMSender,
        hmsSender: HMSSender, logger: Logger,
        verifySignedRequest: @escaping @Sendable (HTTPRequest) async throws -> AppSettings
    ) {
        self.configuration = configuration
        self.verifySignedRequest = verifySignedRequest
        self.authenticator = authenticator
        endedSessions = sessionEvents.subscribe()
        let logger = logger.with("component", "push")
        self.logger = logger
        tokens = PushTokenRepository(database: database)
        settings = PushSettingsRepository(database: database)
        jobs = PushJobRepository(database: database)
        vendorSettings = PushVendorSettingsRepository(database: database)
        attempts = PushAttemptRepository(database: database)
        worker = PushWorker(
            configuration: configuration, jobs: jobs, tokens: tokens, settings: settings, keys: keys,
            sender: sender,
            vendors: PushVendorSenders(
                fcm: fcmSender, hms: hmsSender, settings: vendorSettings, keys: keys, logger: logger),
            attempts: attempts, logger: logger)
    }

    public func register(on router: inout Router) {
        PushTokenController(authenticator: authenticator, tokens: tokens, settings: settings).register(on: &router)
        PushAttemptController(verifySignedRequest: verifySignedRequest, attempts: attempts).register(on: &router)
    }

    /// What push runs while the server serves: the worker (unless `pollInterval` is zero: then this instance
    /// delivers nothing; the outbox is a shared queue), the unbinding of ended sessions' tokens and its backstop, a
    /// sweep (the coordinator's).
    public func backgroundServices(coordinator: CoordinatorRole) -> [any Service] {
        var services: [any Service] = []
        if configuration.pollInterval > .zero {
            let worker = worker
            let batchSize = configuration.batchSize
            services.append(
                PeriodicService(
                    "push worker", every: configuration.pollInterval, firstAfter: .zero,
                    on: .sharedQueue(coordinator)
                ) {
                    // Full batches mean more are due: pass again at once.
                    while !Task.isCancelled, await worker.runPass() >= batchSize {}
                })
        }
        services.append(EndedSessionUnbinder(events: endedSessions, tokens: tokens, logger: logger))
        let tokens = tokens
        let logger = logger
        services.append(
            PeriodicService("push token sweep", every: configuration.sweepInterval, on: .coordinator(coordinator)) {
                do {
                    let removed = try await tokens.sweepEndedSessions()
                    if removed > 0 { logger.info("push tokens of ended sessions removed", ["count": .int(removed)]) }
                } catch {
                    logger.warning("sweeping push tokens failed", ["error": .string(String(describing: error))])
                }
            })
        return services
    }

    /// One worker pass now (tests and tools); returns how many jobs were leased.
    @discardableResult
    public func deliverDueJobs() async -> Int { await worker.runPass() }
}

extension PushModule {
    /// Push's part in account deletion (`AuthModule.accountDeletion(participants:)`): the account's device tokens
    /// go in the deletion's transaction, not later when the ended sessions are heard of, so no push can reach a
    /// device of a deleted account. Its push attempts go with them.
    public var accountDeletionParticipant: AccountDeletionParticipant {
        let tokens = tokens
        let attempts = attempts
        return AccountDeletionParticipant("push") { appId, userId, connection in
            _ = try await tokens.unbindAll(on: connection, appId: appId, userId: userId)
            try await attempts.deleteAll(on: connection, appId: appId, userId: userId)
            return nil
        }
    }
}
