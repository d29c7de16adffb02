import ParleyAuth
import ParleyHTTP
import ParleyLifecycle
import ParleyNet
import ParleyObservability
import ParleyPostgres

/// Releases and update checks (issue 7), assembled: what `ParleyApp` registers and runs.
///
/// - `register(on:)` adds the signed admin routes (`/api/admin/releases...`) and `GET /api/update/check`.
/// - `backgroundServices` listen for release changes of other instances.
/// - `service` publishes, lists, changes and withdraws (also used by `parley release`).
public final class UpdatesModule: Sendable {
    public let service: ReleaseService
    public let cache: ReleaseCache
    let auth: AuthModule
    let listener: ReleaseChangeListener

    /// `cacheTTL`: how old a cached release list may get before a background reload (a backstop for missed
    /// notifications; changes normally reach the cache at once).
    public init(database: PostgresClient, auth: AuthModule, logger: Logger, cacheTTL: Duration = .seconds(30)) {
        let logger = logger.with("component", "updates")
        let repository = ReleaseRepository(database: database)
        let cache = ReleaseCache(ttl: cacheTTL, logger: logger) { appId in try await repository.offered(appId: appId) }
        self.cache = cache
        self.auth = auth
        service = ReleaseService(repository: repository, logger: logger) { appId in cache.invalidate(appId: appId) }
        listener = ReleaseChangeListener(database: database, cache: cache, logger: logger)
    }

    public func register(on router: inout Router) {
        ReleaseAdminController(auth: auth, service: service).register(on: &router)
        UpdateCheckController(auth: auth, cache: cache).register(on: &router)
    }

    /// What updates runs while the server serves: the listener for other instances' release changes.
    public var backgroundServices: [any Service] { [listener] }
}
