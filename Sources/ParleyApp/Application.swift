import Foundation
import ParleyAuth
import ParleyCalls
import ParleyCrypto
import ParleyFiles
import ParleyHTTP
import ParleyHTTPClient
import ParleyLifecycle
import ParleyMessaging
import ParleyNet
import ParleyObservability
import ParleyPostgres
import ParleyPush
import ParleyRealtime
import ParleyUpdates
import ParleyWebhooks

/// The composition root: the only place that knows every concrete type. Builds what `parley serve` runs from a
/// `Configuration` (the loops, the database client, every feature module, the HTTP server) and runs it as one
/// ordered list of services until a signal. The other commands need far less: `CommandContext`.
public final class Application: Sendable {
    public let configuration: Configuration
    public let logger: Logger
    public let metrics: MetricsRegistry
    public let group: EventLoopGroup
    public let database: PostgresClient
    let coordinator: DeploymentCoordinator
    /// Where lag-tolerant reads run: a caught-up replica (PARLEY_DATABASE_READ_URL), else `database`.
    public let reads: PostgresReadRouter
    public let server: HTTPServer
    public let auth: AuthModule
    public let messaging: MessagingModule
    public let realtime: RealtimeModule
    public let files: FilesModule
    public let updates: UpdatesModule
    public let push: PushModule
    public let webhooks: WebhooksModule
    public let calls: CallsModule
    /// Deletes accounts with every feature's part in it (`DELETE /api/users/me`; the admin API).
    public let accountDeletion: AccountDeletion
    /// Outgoing HTTP/2 to APNs.
    let pushClient: HTTPClient
    let logSink: LogSink

    /// Throws without the master key (no token could be signed nor app secret read), behind a proxy without
    /// PARLEY_PUBLIC_URL, and for unusable file storage settings, before any thread starts.
    public init(configuration: Configuration, logSink: LogSink? = nil) throws {
        try configuration.requirePublicURLBehindProxies()
        let authConfiguration = try configuration.authConfiguration()
        let masterKey = authConfiguration.masterKey
        self.configuration = configuration
        let sink = logSink ?? configuration.makeLogSink()
        self.logSink = sink
        let logger = Logger(sink: sink, metadata: [("service", "parley")])
        self.logger = logger
        let blobStorage = try Application.makeBlobStorage(configuration.files, logger: logger)
        let metrics = MetricsRegistry()
        self.metrics = metrics
        group = try EventLoopGroup(threads: configuration.eventLoops)
        let database = PostgresClient(
            configuration: configuration.postgres, group: group, logger: logger,
            metrics: metrics)
        self.database = database
        coordinator = DeploymentCoordinator(database: database, logger: logger, metrics: metrics)
        let group = group
        let replicas = configuration.postgresReplicas.enumerated().map { index, replica in
            PostgresClient(configuration: replica, group: group, logger: logger.with("replica", .int(index)))
        }
        let reads = PostgresReadRouter(
            primary: database, replicas: replicas, maxWait: configuration.databaseReadMaxWait, metrics: metrics,
            logger: logger)
        self.reads = reads
        OperationsController.registerProcessMetrics(metrics)
        let auth = AuthModule(
            configuration: authConfiguration, database: database, logger: logger, metrics: metrics)
        self.auth = auth
        files = FilesModule(
            configuration: configuration.files, storage: blobStorage, database: database,
            authenticator: auth.authenticator,
            signingSecret: HMAC.sha256(key: masterKey.bytes, message: Array("parley-files-signing".utf8)),
            logger: logger, metrics: metrics)
        let webhooks = WebhooksModule(
            configuration: configuration.webhooks, database: database, auth: auth, logger: logger, metrics: metrics)
        self.webhooks = webhooks
        messaging = MessagingModule(
            configuration: configuration.messaging, database: database, reads: reads,
            authenticator: auth.authenticator, logger: logger,
            revokeWindow: { [directory = auth.directory] in directory.app(id: $0)?.revokeWindowSeconds },
            attachments: { [access = files.access] keys, appId, userId in
                try await access.authorize(objectKeys: keys, appId: appId, userId: userId)
            },
            avatars: files.avatarAuthorizer, metrics: metrics,
            beforeSend: webhooks.beforeSendHook, storedCounts: auth.statistics.storedMessages)
        let pushClient = HTTPClient(
            maxResponseBytes: 64 * 1024, tls: HTTPClientTLS(caFile: configuration.push.caFile), logger: logger)
        self.pushClient = pushClient
        push = PushModule(
            configuration: configuration.push, database: database, authenticator: auth.authenticator,
            sessionEvents: auth.events, keys: PushKeyBox(sealer: authConfiguration.sealer),
            sender: APNsSender(client: pushClient, logger: logger.with("component", "push")),
            fcmSender: FCMSender(client: pushClient, logger: logger.with("component", "push")),
            hmsSender: HMSSender(client: pushClient, logger: logger.with("component", "push")), logger: logger,
            verifySignedRequest: { [auth] request in try await auth.verifySignedRequest(request) })
        // Built before the gateway, which answers its frames; its offline pushes go into push's outbox.
        let calls = CallsModule(
            configuration: configuration.calls, database: database, authenticator: auth.authenticator,
            messaging: messaging, notifier: .push(jobs: push.jobs), logger: logger)
        self.calls = calls
        realtime = RealtimeModule(
            configuration: configuration.realtime, auth: auth, messaging: messaging,
            database: database, logger: logger, metrics: metrics, frameHandlers: calls.frameHandlers,
            relayLoop: group.loops[0])
        updates = UpdatesModule(database: database, auth: auth, logger: logger)
        // Files needs no part: the profile's avatar is cleared, so the account's uploads that no message references
        // are left to the file sweeper like any other unreferenced file.
        let accountDeletion = auth.accountDeletion(participants: [
            // Calls first: their records go into 1:1 conversations that messaging's part closes.
            calls.accountDeletionParticipant, messaging.accountDeletionParticipant, push.accountDeletionParticipant,
        ])
        self.accountDeletion = accountDeletion
        let responder = Application.buildResponder(
            configuration: configuration, database: database, metrics: metrics,
            auth: auth, messaging: messaging, realtime: realtime, files: files,
            updates: updates, push: push, webhooks: webhooks, calls: calls, accountDeletion: accountDeletion)
        server = HTTPServer(
            configuration: configuration.httpServer, group: group, responder: responder, logger: logger,
            metrics: metrics)
    }

    static func buildResponder(
        configuration: Configuration, database: PostgresClient, metrics: MetricsRegistry,
        auth: AuthModule, messaging: MessagingModule, realtime: RealtimeModule,
        files: FilesModule, updates: UpdatesModule, push: PushModule, webhooks: WebhooksModule, calls: CallsModule,
        accountDeletion: AccountDeletion
    ) -> HTTPResponder {
        var router = Router()
        OperationsController(database: database, metrics: metrics, metricsToken: configuration.metricsToken)
            .register(on: &router)
        auth.register(
            on: &router, avatars: files.avatarAuthorizer, deletion: accountDeletion,
            profileChanges: messaging.profileChangeRecorder,
            statistics: [realtime.statisticsContributor, files.statisticsContributor])
        messaging.register(on: &router)
        messaging.registerAdmin(on: &router, auth: auth)
        realtime.register(on: &router)
        files.register(on: &router)
        updates.register(on: &router)
        push.register(on: &router)
        webhooks.register(on: &router)
        calls.register(on: &router)
        if configuration.devRoutes {
            DevelopmentController(database: database).register(on: &router)
            auth.registerBenchmarkRoutes(on: &router)
        }
        return HTTPResponder(
            router: router,
            middleware: [
                RequestIDMiddleware(),
                AccessLogMiddleware(metrics: metrics, logAccess: configuration.accessLog),
            ])
    }

    /// What `run` starts, in this order, and stops in reverse: the log flusher (stopped last, so the shutdown is
    /// logged), the loops, the database (its schema checked, or migrated, before anything uses it), the deployment
    /// coordinator, the features (auth first: the others rely on its state), the HTTP server last. So on a signal the server stops first,
    /// letting in-flight requests finish within PARLEY_SHUTDOWN_GRACE_SECONDS, and the database goes last.
    func services(applyMigrations: Bool) -> [any Service] {
        let logSink = logSink
        let group = group
        let database = database
        let reads = reads
        let pushClient = pushClient
        let server = server
        var services: [any Service] = [
            PeriodicService("log flusher", every: .milliseconds(200)) { logSink.flush(wait: false) },
            ResourceService("event loops", stop: { group.shutdown() }),
            ResourceService(
                "database", start: { try await self.prepareSchema(apply: applyMigrations) },
                stop: {
                    await reads.shutdown()
                    await database.shutdown()
                }),
        ]
        services.append(coordinator)
        let role = coordinator.role
        services += auth.backgroundServices(coordinator: role)
        services += messaging.backgroundServices(coordinator: role)
        services += realtime.backgroundServices(coordinator: role)
        services += files.backgroundServices(coordinator: role)
        services += updates.backgroundServices
        services.append(ResourceService("push client", stop: { pushClient.shutdown() }))
        services += push.backgroundServices(coordinator: role)
        services += webhooks.backgroundServices(coordinator: role)
        services += calls.backgroundServices(coordinator: role)
        services.append(
            ResourceService("http server", start: { try await server.start() }, stop: { await server.shutdown() }))
        return services
    }

    /// Serves until SIGTERM or SIGINT (`TerminationSignals.install()` must have run), then shuts down gracefully.
    public func run(applyMigrations: Bool) async throws {
        let logger = logger
        try await run(applyMigrations: applyMigrations) {
            let signal = await TerminationSignals.next()
            logger.info("signal received", ["signal": .int(Int(signal))])
        }
    }

    /// Starts every service, serves until `stop` returns, then stops them in reverse and returns. Throws what
    /// failed to start, or what failed while running (after stopping everything).
    public func run(applyMigrations: Bool, until stop: @escaping @Sendable () async -> Void) async throws {
        defer { logSink.flush() }
        let logger = logger
        let grace = configuration.shutdownGrace
        try await ServiceGroup(services: services(applyMigrations: applyMigrations), logger: logger).run {
            await stop()
            logger.info("shutting down", ["grace_seconds": .double(grace.secondsDouble)])
        }
        logger.info("stopped")
    }

    static func makeBlobStorage(_ configuration: FilesConfiguration, logger: Logger) throws -> any BlobStorage {
        switch configuration.backend {
        case .local(let directory):
            return LocalBlobStorage(root: directory)
        case .s3(let s3, _):
            do {
                return try S3BlobStorage(configuration: s3, client: HTTPClient(logger: logger))
            } catch {
                throw Configuration.Invalid(description: "S3 settings: \(error)")
            }
        }
    }

    /// `serve` refuses to start with pending migrations unless asked to apply them.
    func prepareSchema(apply: Bool) async throws {
        let migrator = Migrator(client: database, directory: configuration.migrationsDirectory, logger: logger)
        if apply {
            let applied = try await migrator.migrate()
            if !applied.isEmpty { logger.info("migrations applied", ["count": .int(applied.count)]) }
            return
        }
        let status = try await migrator.status()
        if !status.pending.isEmpty {
            throw StartupError(
                description:
                    "\(status.pending.count) migration(s) pending (\(status.pending.joined(separator: ", "))): "
                    + "run `parley migrate` first, or start with `parley serve --migrate`")
        }
    }

    public struct StartupError: Error, CustomStringConvertible {
        public let description: String
    }
}
