import ParleyAuth
import ParleyHTTP
import ParleyObservability
import ParleyPostgres
import Synchronization

/// Push, assembled: the token routes, the outbox worker (with the sender that delivers), and the unbinding of
/// tokens when sessions end. Messages reach the outbox without this module: a trigger on `messages` queues them
/// in the sending transaction (migrations/0008), so messaging knows nothing of push.
public final class PushModule: Sendable {
    public let configuration: PushConfiguration
    public let tokens: PushTokenRepository
    public let settings: PushSettingsRepository
    public let jobs: PushJobRepository
    let worker: PushWorker
    let authenticator: Authenticator
    let sessionEvents: SessionEvents
    let logger: Logger
    private let tasks = Mutex<[Task<Void, Never>]>([])

    public init(configuration: PushConfiguration, database: PostgresClient, authenticator: Authenticator,
                sessionEvents: SessionEvents, keys: PushKeyBox, sender: any PushSender, logger: Logger) {
        self.configuration = configuration
        self.authenticator = authenticator
        self.sessionEvents = sessionEvents
        let logger = logger.with("component", "push")
        self.logger = logger
        tokens = PushTokenRepository(database: database)
        settings = PushSettingsRepository(database: database)
        jobs = PushJobRepository(database: database)
        worker = PushWorker(configuration: configuration, jobs: jobs, tokens: tokens, settings: settings, keys: keys,
                            sender: sender, logger: logger)
    }

    public func register(on router: inout Router) {
        PushTokenController(authenticator: authenticator, tokens: tokens).register(on: &router)
    }

    /// Starts the worker (unless `pollInterval` is zero), the unbinding of ended sessions' tokens and its sweep.
    public func start() {
        var started: [Task<Void, Never>] = []
        if configuration.pollInterval > .zero {
            started.append(Task { [worker] in await worker.run() })
        }
        let ended = sessionEvents.subscribe()
        let tokens = tokens
        let logger = logger
        started.append(Task {
            for await event in ended {
                guard case .sessionEnded(let session) = event else { continue }
                do {
                    try await tokens.unbindEndedSession(session.sessionId)
                } catch {
                    logger.warning("unbinding an ended session's push tokens failed; the sweep will",
                                   ["error": .string(String(describing: error))])
                }
            }
        })
        let interval = configuration.sweepInterval
        started.append(Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if Task.isCancelled { break }
                do {
                    let removed = try await tokens.sweepEndedSessions()
                    if removed > 0 { logger.info("push tokens of ended sessions removed", ["count": .int(removed)]) }
                } catch {
                    logger.warning("sweeping push tokens failed", ["error": .string(String(describing: error))])
                }
            }
        })
        tasks.withLock { $0 += started }
    }

    /// One worker pass now (tests and tools); returns how many jobs were leased.
    @discardableResult
    public func deliverDueJobs() async -> Int { await worker.runPass() }

    public func stop() {
        let all = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in all { task.cancel() }
    }
}
