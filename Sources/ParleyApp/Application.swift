import Foundation
import ParleyAuth
import ParleyCrypto
import ParleyFiles
import ParleyHTTPClient
import ParleyHTTP
import ParleyHTTPClient
import ParleyMessaging
import ParleyNet
import ParleyObservability
import ParleyPostgres
import ParleyPush
import ParleyRealtime
import ParleyUpdates

/// The composition root: the only place that knows every concrete type. Builds the loops, the
/// database client, the router and the server from a `Configuration`, and runs them until a signal.
public final class Application: Sendable {
    public let configuration: Configuration
    public let logger: Logger
    public let metrics: MetricsRegistry
    public let group: EventLoopGroup
    public let database: PostgresClient
    public let server: HTTPServer
    /// Auth and tenancy; nil without PARLEY_MASTER_KEY (then `run` refuses to serve, `migrate` still works).
    public let auth: AuthModule?
    /// Conversations and messages; nil when `auth` is.
    public let messaging: MessagingModule?
    /// The WebSocket gateway; nil when `auth` is.
    public let realtime: RealtimeModule?
    /// Uploads, signed downloads and the sweeper; nil when `auth` is.
    public let files: FilesModule?
    /// Releases and update checks; nil when `auth` is.
    public let updates: UpdatesModule?
    /// Push tokens and the outbox worker (APNs); nil when `auth` is.
    public let push: PushModule?
    /// Outgoing HTTP/2 to APNs.
    let pushClient: HTTPClient?
    let logSink: LogSink

    public init(configuration: Configuration, logSink: LogSink? = nil) throws {
        self.configuration = configuration
        let sink = logSink ?? (configuration.logFile.map { LogSink.file(path: $0, level: configuration.logLevel) }
            ?? LogSink(fd: 1, level: configuration.logLevel))
        self.logSink = sink
        logger = Logger(sink: sink, metadata: [("service", "parley")])
        metrics = MetricsRegistry()
        group = try EventLoopGroup(threads: configuration.eventLoops)
        var dbConfig = PostgresConfiguration(conninfo: configuration.databaseURL)
        dbConfig.poolSize = configuration.databasePoolSize
        dbConfig.acquireTimeout = configuration.databaseAcquireTimeout
        database = PostgresClient(configuration: dbConfig, group: group, logger: logger, metrics: metrics)
        OperationsController.registerProcessMetrics(metrics)
        auth = configuration.masterKey == nil ? nil
            : AuthModule(configuration: try configuration.authConfiguration(), database: database, logger: logger)
        let database = database
        let logger = logger
        let blobStorage = try Application.makeBlobStorage(configuration.files, logger: logger)
        let filesModule = auth.map { auth in
            FilesModule(configuration: configuration.files, storage: blobStorage,
                            database: database, authenticator: auth.authenticator,
                            signingSecret: HMAC.sha256(key: configuration.masterKey?.bytes ?? [],
                                                       message: Array("parley-files-signing".utf8)),
                            logger: logger)
        }
        files = filesModule
        let messagingModule = auth.map { auth in
            MessagingModule(configuration: configuration.messaging, database: database,
                            authenticator: auth.authenticator, logger: logger,
                            revokeWindow: { [directory = auth.directory] in directory.app(id: $0)?.revokeWindowSeconds },
                            attachments: filesModule?.access)
        }
        messaging = messagingModule
        let metrics = metrics
        realtime = auth.flatMap { auth in
            messagingModule.map { messaging in
                RealtimeModule(configuration: configuration.realtime, auth: auth, messaging: messaging,
                               database: database, logger: logger, metrics: metrics)
            }
        }
        updates = auth.map { UpdatesModule(database: database, auth: $0, logger: logger) }
        let pushClient = auth.map { _ in HTTPClient(maxResponseBytes: 64 * 1024, logger: logger) }
        self.pushClient = pushClient
        push = auth.flatMap { auth in
            pushClient.map { client in
                PushModule(configuration: configuration.push, database: database, authenticator: auth.authenticator,
                           sessionEvents: auth.events, keys: PushKeyBox(masterKey: auth.configuration.masterKey),
                           sender: APNsSender(client: client, logger: logger.with("component", "push")), logger: logger)
            }
        }
        let responder = Application.buildResponder(configuration: configuration, database: database, metrics: metrics,
                                                   auth: auth, messaging: messaging, realtime: realtime, files: files,
                                                   updates: updates, push: push)
        server = HTTPServer(configuration: configuration.httpServer, group: group, responder: responder, logger: logger,
                            metrics: metrics)
    }

    static func buildResponder(configuration: Configuration, database: PostgresClient, metrics: MetricsRegistry,
                               auth: AuthModule? = nil, messaging: MessagingModule? = nil,
                               realtime: RealtimeModule? = nil, files: FilesModule? = nil,
                               updates: UpdatesModule? = nil, push: PushModule? = nil) -> HTTPResponder {
        var router = Router()
        OperationsController(database: database, metrics: metrics).register(on: &router)
        auth?.register(on: &router)
        messaging?.register(on: &router)
        realtime?.register(on: &router)
        files?.register(on: &router)
        updates?.register(on: &router)
        push?.register(on: &router)
        if configuration.devRoutes {
            DevelopmentController(database: database).register(on: &router)
            auth?.registerBenchmarkRoutes(on: &router)
        }
        return HTTPResponder(router: router, middleware: [
            RequestIDMiddleware(),
            AccessLogMiddleware(metrics: metrics, logAccess: configuration.accessLog),
            ErrorMiddleware(),
        ])
    }

    /// Starts every service in order (the schema is checked first, the HTTP server listens last), serves until
    /// `stop` returns, then stops them in reverse and returns. Throws what failed to start, or what failed while
    /// running (after stopping everything).
    public func run(applyMigrations: Bool, until stop: @escaping @Sendable () async -> Void) async throws {
        defer { logSink.flush() }
        // Refuse before touching anything: without the master key no token can be signed or app secret read.
        guard let auth, let messaging, let realtime, let files, let updates, let push, let pushClient else {
            throw StartupError(description: Configuration.missingMasterKey)
        }
        let logger = logger
        let grace = configuration.shutdownGrace
        let group = group
        let database = database
        let server = server
        let logSink = logSink
        let services: [any Service] = [
            PeriodicService("log flusher", every: .milliseconds(200)) { logSink.flush(wait: false) },
            ResourceService("event loops", stop: { group.shutdown() }),
            ResourceService("database", start: { try await self.prepareSchema(apply: applyMigrations) },
                            stop: { await database.shutdown() }),
        ] + auth.backgroundServices + messaging.backgroundServices + realtime.backgroundServices
            + files.backgroundServices + updates.backgroundServices
            + [ResourceService("push client", stop: { pushClient.shutdown() })] + push.backgroundServices
            + [ResourceService("http server", start: { try await server.start() }, stop: { await server.shutdown() })]
        try await ServiceGroup(services: services, logger: logger).run {
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
            throw StartupError(description: "\(status.pending.count) migration(s) pending (\(status.pending.joined(separator: ", "))): "
                + "run `parley migrate` first, or start with `parley serve --migrate`")
        }
    }

    public struct StartupError: Error, CustomStringConvertible {
        public let description: String
    }
}
