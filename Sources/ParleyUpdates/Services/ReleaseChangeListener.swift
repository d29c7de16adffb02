import ParleyLifecycle
import ParleyNet
import ParleyObservability
import ParleyPostgres

/// Keeps `ReleaseCache` in step with changes made on other instances (or by `parley release`): LISTEN
/// `parley_release_changed` (payload: app id) drops that app's releases; a lost listening connection drops all
/// of them, since notifications may have been missed. The cache's TTL covers anything else (and the cache is
/// empty until the first check, so nothing is missed before this listens).
struct ReleaseChangeListener: Service {
    let database: PostgresClient
    let cache: ReleaseCache
    let logger: Logger

    var name: String { "release change listener" }

    func run() async {
        for await event in database.listen(ReleaseRepository.changeChannel) {
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
}
