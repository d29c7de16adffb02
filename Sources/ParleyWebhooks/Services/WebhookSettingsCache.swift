import ParleyLifecycle
import ParleyObservability
import ParleyPostgres
import Synchronization

/// Every app's webhook settings in memory, so the send path asks "does this app have before_send?" without a
/// query. Loaded before anything serves (`prepare`), then kept in step as the app directory is: LISTEN
/// `parley_webhook_changed` (payload: app id) reloads that app at once, a lost listening connection reloads all,
/// and a periodic reload backs both up.
public final class WebhookSettingsCache: Service {
    private let byApp = Mutex<[Int64: WebhookSettings]>([:])
    /// How many apps have before_send on: while none has, a send reads only this (never written then, so the loops
    /// share its cache line without bouncing it), not the lock.
    private let beforeSendApps = Atomic<Int>(0)
    let repository: WebhookSettingsRepository
    let database: PostgresClient
    let logger: Logger

    init(repository: WebhookSettingsRepository, database: PostgresClient, logger: Logger) {
        self.repository = repository
        self.database = database
        self.logger = logger
    }

    public var name: String { "webhook settings" }

    public func settings(appId: Int64) -> WebhookSettings? { byApp.withLock { $0[appId] } }

    /// Whether the app wants `event` now: one lock and a dictionary lookup.
    public func wants(_ event: WebhookEvent, appId: Int64) -> Bool {
        if event == .beforeSend && beforeSendApps.load(ordering: .relaxed) == 0 { return false }
        return byApp.withLock { $0[appId]?.wants(event) ?? false }
    }

    public func prepare() async throws { try await reloadAll() }

    public func run() async {
        for await event in database.listen(WebhookSettingsRepository.changeChannel) {
            switch event {
            case .notification(_, let payload):
                guard let appId = Int64(payload) else { continue }
                await reload(appId: appId)
            case .reconnected:
                await reloadAllLogged()
            }
        }
    }

    func reload(appId: Int64) async {
        do {
            let settings = try await repository.settings(appId: appId)
            byApp.withLock { map in
                map[appId] = settings
                countBeforeSend(map)
            }
        } catch {
            logger.warning(
                "could not reload an app's webhook settings",
                ["app_id": .int(Int(appId)), "error": .string(String(describing: error))])
        }
    }

    func reloadAll() async throws {
        let all = try await repository.all()
        byApp.withLock { map in
            map = [:]
            for settings in all { map[settings.appId] = settings }
            countBeforeSend(map)
        }
    }

    /// Called under the lock after every change.
    private func countBeforeSend(_ map: [Int64: WebhookSettings]) {
        let count = map.values.count { $0.wants(.beforeSend) }
        if beforeSendApps.load(ordering: .relaxed) != count { beforeSendApps.store(count, ordering: .relaxed) }
    }

    func reloadAllLogged() async {
        do { try await reloadAll() } catch {
            logger.warning("could not reload webhook settings", ["error": .string(String(describing: error))])
        }
    }
}
