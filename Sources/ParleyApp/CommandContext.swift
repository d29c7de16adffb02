import ParleyNet
import ParleyObservability
import ParleyPostgres

/// What `parley migrate`, `parley app ...` and `parley release ...` need: the settings, a logger and a database
/// client on an event loop. None of the server's modules, so `migrate` works without the master key and a
/// command starts no background work.
public final class CommandContext: Sendable {
    public let configuration: Configuration
    public let logger: Logger
    public let database: PostgresClient
    let group: EventLoopGroup

    init(configuration: Configuration) throws {
        self.configuration = configuration
        logger = Logger(sink: configuration.makeLogSink(), metadata: [("service", "parley")])
        // A command runs one statement at a time: one loop is plenty.
        group = try EventLoopGroup(threads: 1)
        database = PostgresClient(
            configuration: configuration.postgres, group: group, logger: logger,
            metrics: MetricsRegistry())
    }

    /// Builds a context, runs `body` with it, then closes the database client and the loop, whether `body` threw
    /// or not.
    public static func with<T: Sendable>(
        _ configuration: Configuration,
        _ body: (CommandContext) async throws -> T
    ) async throws -> T {
        let context = try CommandContext(configuration: configuration)
        defer { context.group.shutdown() }
        do {
            let result = try await body(context)
            await context.database.shutdown()
            return result
        } catch {
            await context.database.shutdown()
            throw error
        }
    }

    public var migrator: Migrator {
        Migrator(client: database, directory: configuration.migrationsDirectory, logger: logger)
    }

    /// Refuses to touch a database whose migrations are pending.
    func requireSchema() async throws {
        let status = try await migrator.status()
        guard status.pending.isEmpty else {
            throw Application.StartupError(
                description: "\(status.pending.count) migration(s) pending: run `parley migrate` first")
        }
    }
}
