import ParleyAuth
import ParleyHTTP
import ParleyHTTPClient
import ParleyLifecycle
import ParleyMessageModel
import ParleyObservability
import ParleyPostgres

/// Webhooks, assembled: the settings cache, the outbox worker, `before_send`, and the admin routes. Changes reach
/// the outbox without this module: triggers queue the events in the changes' transactions (migrations/0022), so no
/// feature knows webhooks; `before_send` reaches messaging as `beforeSendHook`, which ParleyApp hands it.
public final class WebhooksModule: Sendable {
    public let configuration: WebhookConfiguration
    public let settings: WebhookSettingsCache
    public let settingsRepository: WebhookSettingsRepository
    public let jobs: WebhookJobRepository
    public let beforeSend: BeforeSendService
    let worker: WebhookWorker
    let auth: AuthModule
    let client: HTTPClient
    let logger: Logger

    public init(
        configuration: WebhookConfiguration, database: PostgresClient, auth: AuthModule, logger: Logger,
        metrics: MetricsRegistry
    ) {
        self.configuration = configuration
        self.auth = auth
        let logger = logger.with("component", "webhooks")
        self.logger = logger
        // Its own client: connections (and the addresses checked when they were made) are never shared with S3 or
        // APNs; answers larger than this are not answers.
        client = HTTPClient(maxResponseBytes: 256 * 1024, logger: logger)
        settingsRepository = WebhookSettingsRepository(database: database)
        settings = WebhookSettingsCache(repository: settingsRepository, database: database, logger: logger)
        jobs = WebhookJobRepository(database: database)
        let metrics = WebhookMetrics(registry: metrics)
        let caller = WebhookCaller(
            client: client, directory: auth.directory, secrets: auth.secrets,
            policy: WebhookAddressPolicy(allowPrivate: configuration.allowPrivateAddresses))
        beforeSend = BeforeSendService(settings: settings, caller: caller, metrics: metrics, logger: logger)
        worker = WebhookWorker(
            configuration: configuration, jobs: jobs, settings: settings, caller: caller, metrics: metrics,
            logger: logger)
    }

    /// `before_send` as messaging consults it.
    public var beforeSendHook: BeforeSendHook {
        let service = beforeSend
        return BeforeSendHook(isActive: { service.isActive(appId: $0) }, consult: { try await service.consult($0) })
    }

    public func register(on router: inout Router) {
        WebhookAdminController(auth: auth, settings: settingsRepository, jobs: jobs).register(on: &router)
    }

    /// What webhooks run while the server serves, in start order: the settings cache (loaded before anything
    /// serves; `before_send` reads it), the HTTP client (closed after the worker), the worker (unless `pollInterval`
    /// is zero; the outbox is a shared queue), the backlog gauges, the pruning of finished events (the coordinator's).
    public func backgroundServices(coordinator: CoordinatorRole) -> [any Service] {
        let client = client
        let settings = settings
        var services: [any Service] = [
            settings,
            PeriodicService("webhook settings refresh", every: configuration.settingsRefreshInterval) {
                await settings.reloadAllLogged()
            },
            ResourceService("webhook client", stop: { client.shutdown() }),
        ]
        let worker = worker
        if configuration.pollInterval > .zero {
            services.append(
                PeriodicService(
                    "webhook worker", every: configuration.pollInterval, firstAfter: .zero,
                    on: .sharedQueue(coordinator)
                ) {
                    // A full lease means more may be waiting: pass again at once. Otherwise wait for the next
                    // tick, so that a busy app's events are leased many at a time, not a few per pass.
                    while !Task.isCancelled, await worker.runPass().full {}
                })
        }
        services.append(PeriodicService("webhook backlog", every: .seconds(15)) { await worker.measureBacklog() })
        let jobs = jobs
        let hours = configuration.retentionHours
        let logger = logger
        services.append(
            PeriodicService(
                "webhook pruner", every: .seconds(3600), firstAfter: .seconds(60), on: .coordinator(coordinator)
            ) {
                do {
                    let deleted = try await jobs.prune(olderThanHours: hours)
                    if deleted > 0 { logger.info("pruned webhook events", ["deleted": .int(deleted)]) }
                } catch {
                    logger.warning("pruning webhook events failed", ["error": .string(String(describing: error))])
                }
            })
        return services
    }

    /// Worker passes now until nothing more is delivered (tests and tools); returns how many events left the queue.
    @discardableResult
    public func deliverDueEvents() async -> Int {
        var total = 0
        while true {
            let progressed = await worker.runPass().left
            if progressed == 0 { return total }
            total += progressed
        }
    }
}
