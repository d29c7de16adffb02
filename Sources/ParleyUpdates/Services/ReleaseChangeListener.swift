import ParleyObservability
import ParleyPostgres
import Synchronization

/// Keeps `ReleaseCache` in step with changes made on other instances (or by `parley release`): LISTEN
/// `parley_release_changed` (payload: app id) drops that app's releases; a lost listening connection drops all
/// of them, since notifications may have been missed. The cache's TTL covers anything else.
final class ReleaseChangeListener: Sendable {
    let database: PostgresClient
    let cache: ReleaseCache
    let logger: Logger
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(database: PostgresClient, cache: ReleaseCache, logger: Logger) {
        self.database = database
        self.cache = cache
        self.logger = logger
    }

    func start() {
        let stream = database.listen(ReleaseRepository.changeChannel)
        let cache = cache
        let logger = logger
        let listening = Task {
            for await event in stream {
                switch event {
                case .notification(_, let payload):
                    if let appId = Int64(payload) {
                        cache.invalidate(appId: appId)
                    } else {
                        logger.warning("unexpected release notification", ["payload": .string(payload)])
                        cache.invalidateAll()
                    }
                case .reconnected:
                    cache.invalidateAll()
                }
            }
        }
        task.withLock { $0 = listening }
    }

    func stop() {
        task.withLock { task in
            task?.cancel()
            task = nil
        }
    }
}
