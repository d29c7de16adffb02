import Foundation
import ParleyLifecycle
import ParleyNet
import ParleyObservability
import ParleyPostgres
import Synchronization

/// Keeps this instance's in-memory auth state in step with the database and the other instances:
///
/// - `prepare()`, before anything serves: every app, and the sessions ended within the longest token lifetime;
/// - `run()`: LISTEN `parley_session_ended` (payload: session id) and `parley_app_changed` (payload: app id),
///   acted on at once;
/// - `poll()`, every `pollInterval` (`AuthModule` runs it as a periodic service): sessions ended and apps
///   changed since the previous poll (with a lookback for transactions that committed late), which also covers
///   notifications missed while the listening connection was down; and housekeeping every minute (forgetting
///   sessions whose tokens have all expired; deleting expired refresh tokens, nonces and failed-login rows).
///
/// So a session ended anywhere has its tokens refused here within about a second.
public final class AuthSyncService: Service {
    private struct State {
        var watermark: Date?
        var lastPurge: Instant?
    }

    /// Re-read rows this far behind the previous poll: `now()` is a transaction's start time, so a row can
    /// become visible after a poll that should have seen it.
    static let lookback: TimeInterval = 10
    static let purgeInterval: Duration = .seconds(60)

    let apps: AppRepository
    let directory: AppDirectory
    let sessions: SessionService
    let throttles: LoginThrottleRepository
    let revocations: SessionRevocations
    let configuration: AuthConfiguration
    let logger: Logger
    private let state = Mutex(State())

    init(
        apps: AppRepository, directory: AppDirectory, sessions: SessionService, throttles: LoginThrottleRepository,
        revocations: SessionRevocations, configuration: AuthConfiguration, logger: Logger
    ) {
        self.apps = apps
        self.directory = directory
        self.sessions = sessions
        self.throttles = throttles
        self.revocations = revocations
        self.configuration = configuration
        self.logger = logger
    }

    var database: PostgresClient { apps.database }

    public var name: String { "auth sync" }

    /// Loads the initial state; throws when the database cannot be read.
    public func prepare() async throws {
        let startedAt = try await databaseNow()
        for app in try await apps.list() { directory.upsert(app) }
        for row in try await sessions.sessions.endedWithin(seconds: retentionSeconds()) {
            revocations.insert(row.session.sessionId, endedAt: Int64(row.endedAt.timeIntervalSince1970))
        }
        state.withLock { $0.watermark = startedAt }
        logger.info(
            "auth state loaded", ["apps": .int(directory.all.count), "ended_sessions": .int(revocations.count)])
    }

    /// Listens for ended sessions and changed apps until cancelled.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.listenForEndedSessions() }
            group.addTask { await self.listenForAppChanges() }
        }
    }

    // MARK: Notifications

    private func listenForEndedSessions() async {
        for await event in database.listen(SessionRepository.endedChannel) {
            switch event {
            case .notification(_, let sessionId):
                await sessionEnded(sessionId)
            case .reconnected:
                await poll()
            }
        }
    }

    private func listenForAppChanges() async {
        for await event in database.listen(AppRepository.changeChannel) {
            switch event {
            case .notification(_, let payload):
                guard let id = Int64(payload) else { continue }
                do {
                    if let app = try await apps.find(id: id) { directory.upsert(app) } else { directory.remove(id: id) }
                } catch {
                    logger.warning(
                        "could not reload a changed app",
                        [
                            "app_id": .int(Int(id)),
                            "error": .string(String(describing: error)),
                        ])
                }
            case .reconnected:
                await poll()
            }
        }
    }

    /// Another instance (or this one) ended a session: refuse its tokens, and publish the event with the
    /// details the database has (who, why, which device displaced it).
    func sessionEnded(_ sessionId: String) async {
        // Refused before the database is read (the read may take a while, or fail); whoever inserts the
        // revocation publishes the event, so it goes out once (the poll's `announce` sees it inserted).
        guard revocations.insert(sessionId, endedAt: Int64(Date().timeIntervalSince1970)) else { return }
        do {
            if let row = try await sessions.sessions.ended(id: sessionId) {
                sessions.events.publish(.sessionEnded(row.session))
            }
        } catch {
            // The tokens are refused; only the event (closing live sockets) is lost while the database is down.
            logger.warning("could not read an ended session", ["error": .string(String(describing: error))])
        }
    }

    // MARK: Poll

    /// One poll: ended sessions and changed apps since the previous poll, then pruning and housekeeping. Every
    /// instance polls every second, so a quiet poll is one statement: the rows are read only when there are some.
    func poll() async {
        do {
            let since = state.withLock { $0.watermark }?.addingTimeInterval(-Self.lookback)
            let head = try await pollHead(since: since)
            if head.sessionsEnded { sessions.announce(try await sessions.sessions.endedSince(head.since)) }
            if head.appsChanged {
                for app in try await apps.changed(since: head.since) { directory.upsert(app) }
            }
            state.withLock { state in
                if state.watermark.map({ $0 < head.polledAt }) ?? true { state.watermark = head.polledAt }
            }
            try await maintainIfDue()
        } catch {
            logger.warning("auth state poll failed", ["error": .string(String(describing: error))])
        }
    }

    /// Once a minute: forget ended sessions whose tokens have all expired, delete expired rows and full buckets.
    private func maintainIfDue() async throws {
        let now = Instant.now()
        let due = state.withLock { state -> Bool in
            if let last = state.lastPurge, now.since(last) < Self.purgeInterval { return false }
            state.lastPurge = now
            return true
        }
        guard due else { return }
        revocations.prune(endedBefore: Int64(Date().timeIntervalSince1970) - Int64(retentionSeconds()))
        try await sessions.sessions.purgeExpired()
        try await throttles.purge(windowSeconds: configuration.loginFailureWindow)
        try await RegistrationThrottleRepository(database: database).purge()
    }

    /// The longest an access or IM token can live now (the authenticator refuses one issued under a longer lifetime
    /// since lowered): an ended session is remembered this long.
    func retentionSeconds() -> Int {
        let defaults = configuration.lifetimes
        var longest = max(defaults.access, defaults.im)
        for app in directory.all {
            longest = max(longest, app.accessTokenTTL ?? 0, app.imTokenTTL ?? 0)
        }
        return longest
    }

    private func databaseNow() async throws -> Date {
        try await database.query("SELECT now()")[0].decode(0, as: Date.self)
    }

    /// The database's clock, the poll's lower bound (`since`, or the lookback before now), and whether any session
    /// ended or any app changed from it on (the columns `endedSince` and `AppRepository.changed` read).
    private func pollHead(since: Date?) async throws -> (
        polledAt: Date, since: Date, sessionsEnded: Bool, appsChanged: Bool
    ) {
        let row = try await database.query(
            """
            WITH clock AS (
                SELECT now() AS polled_at,
                       coalesce(\(since), now() - make_interval(secs => \(Self.lookback))) AS since)
            SELECT c.polled_at, c.since,
                   EXISTS (SELECT 1 FROM sessions s WHERE s.ended_at >= c.since) AS sessions_ended,
                   EXISTS (SELECT 1 FROM apps a WHERE a.updated_at >= c.since) AS apps_changed
            FROM clock c
            """)[0]
        return (
            try row.decode("polled_at", as: Date.self), try row.decode("since", as: Date.self),
            try row.decode("sessions_ended", as: Bool.self), try row.decode("apps_changed", as: Bool.self)
        )
    }
}
