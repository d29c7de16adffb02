import ParleyNet
import ParleyObservability

/// What a `listen` stream yields.
public enum PostgresNotificationEvent: Sendable, Hashable {
    /// A `NOTIFY` / `pg_notify` on the channel, in the order the server delivered them.
    case notification(channel: String, payload: String)
    /// The listening connection was lost and is back: notifications sent in between were missed.
    case reconnected
}

/// What a `sessionLock` stream yields.
public enum SessionLockEvent: Sendable, Hashable {
    /// The client holds the lock now.
    case acquired
    /// The session connection was lost: the server has released the lock, and another client may hold it.
    case lost
}

/// The one connection a client keeps for session state: LISTEN and session advisory locks, both of which live and
/// die with one server session. It connects on the first subscription, LISTENs to every channel that has
/// subscribers, tries to take every lock that has subscribers (again every `lockRetryInterval` while another
/// session holds it), and after losing the connection reconnects with exponential backoff (50 ms doubling to 1 s,
/// jittered by up to half), LISTENs again, tells every channel subscriber `.reconnected` and tries its locks again.
/// The cap is short because every realtime event between instances waits for this connection: after a
/// database restart the pool is back at the first query, and the feed should follow within about a second
/// (one attempt a second per instance costs the database nothing).
///
/// Loop-confined like `LoopPool`; `@unchecked Sendable` so it can be named in closures sent to its loop.
final class SessionConnection: @unchecked Sendable, ConnectionDelegate {
    typealias Continuation = AsyncStream<PostgresNotificationEvent>.Continuation

    let loop: EventLoop
    private let configuration: PostgresConfiguration
    private let resolver: HostResolver
    private let logger: Logger

    private var driver: ConnectionDriver?
    private var subscribers: [String: [UInt64: Continuation]] = [:]
    private var nextSubscriberID: UInt64 = 0
    /// Channels the current connection LISTENs to (confirmed by the server).
    private var listening: Set<String> = []
    /// Channels whose LISTEN is on its way.
    private var pendingListen: Set<String> = []
    private var hasConnectedBefore = false
    private var reconnectTimer: EventLoop.TimerID?
    private var backoff: Duration = .milliseconds(50)
    private var isShutDown = false
    private var nextConnectionID = 0

    typealias LockContinuation = AsyncStream<SessionLockEvent>.Continuation
    private let lockRetryInterval: Duration
    private var lockSubscribers: [Int64: [UInt64: LockContinuation]] = [:]
    /// Locks the current connection holds.
    private var heldLocks: Set<Int64> = []
    /// Locks whose attempt is on its way.
    private var pendingLocks: Set<Int64> = []
    private var lockRetryTimer: EventLoop.TimerID?
    /// Lock attempts answered so far (for tests).
    private var lockAttempts = 0

    init(
        loop: EventLoop, configuration: PostgresConfiguration, resolver: HostResolver, logger: Logger,
        lockRetryInterval: Duration = .seconds(2)
    ) {
        self.loop = loop
        self.configuration = configuration
        self.resolver = resolver
        self.logger = logger.with("component", "session connection")
        self.lockRetryInterval = lockRetryInterval
    }

    private var hasSubscribers: Bool { !subscribers.isEmpty || !lockSubscribers.isEmpty }

    private func onLoop(_ work: @escaping @Sendable () -> Void) {
        if loop.inEventLoop { work() } else { loop.execute(work) }
    }

    // MARK: Subscribers

    func subscribe(_ channel: String) -> AsyncStream<PostgresNotificationEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PostgresNotificationEvent.self)
        onLoop { [self] in
            guard let id = newSubscriber(continuation, end: { $0.unsubscribe(id: $1, channel: channel) }) else {
                return
            }
            subscribers[channel, default: [:]][id] = continuation
            if let driver, driver.isReady {
                listen([channel], on: driver)
            } else {
                connectIfIdle()
            }
        }
        return stream
    }

    /// A new subscriber's id, its stream's end handed to `end` on the loop; nil after shutdown (the stream is then
    /// finished at once).
    private func newSubscriber<Event>(
        _ continuation: AsyncStream<Event>.Continuation,
        end: @escaping @Sendable (SessionConnection, UInt64) -> Void
    ) -> UInt64? {
        guard !isShutDown else {
            continuation.finish()
            return nil
        }
        nextSubscriberID += 1
        let id = nextSubscriberID
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.loop.execute { end(self, id) }
        }
        return id
    }

    private func connectIfIdle() {
        if driver == nil && reconnectTimer == nil { connect() }
    }

    private func unsubscribe(id: UInt64, channel: String) {
        subscribers[channel]?[id] = nil
        guard subscribers[channel]?.isEmpty == true else { return }
        subscribers[channel] = nil
        if listening.remove(channel) != nil, let driver, driver.isReady {
            driver.enqueue(
                ConnectionOperation(
                    command: .simple("UNLISTEN \(LibPQ.quoteIdentifier(channel))"),
                    completion: .callback { _ in }))
        }
    }

    /// Channels the server currently LISTENs to for this client.
    func listeningChannels() async -> Set<String> {
        await withUnsafeContinuation { continuation in
            onLoop { [self] in continuation.resume(returning: listening) }
        }
    }

    // MARK: Session locks

    func subscribeLock(_ key: Int64) -> AsyncStream<SessionLockEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionLockEvent.self)
        onLoop { [self] in
            guard let id = newSubscriber(continuation, end: { $0.unsubscribeLock(id: $1, key: key) }) else { return }
            lockSubscribers[key, default: [:]][id] = continuation
            if heldLocks.contains(key) {
                continuation.yield(.acquired)
            } else if let driver, driver.isReady {
                tryLocks(on: driver)
            } else {
                connectIfIdle()
            }
        }
        return stream
    }

    private func unsubscribeLock(id: UInt64, key: Int64) {
        lockSubscribers[key]?[id] = nil
        guard lockSubscribers[key]?.isEmpty == true else { return }
        lockSubscribers[key] = nil
        if heldLocks.remove(key) != nil, let driver, driver.isReady {
            driver.enqueue(
                ConnectionOperation(
                    command: .extended("SELECT pg_advisory_unlock(\(key))"), completion: .callback { _ in }))
        }
    }

    /// Tries every wanted lock this connection neither holds nor is already trying; a lock another session holds
    /// is tried again after `lockRetryInterval`.
    private func tryLocks(on driver: ConnectionDriver) {
        for key in lockSubscribers.keys where !heldLocks.contains(key) && !pendingLocks.contains(key) {
            pendingLocks.insert(key)
            driver.enqueue(
                ConnectionOperation(
                    command: .extended("SELECT pg_try_advisory_lock(\(key)) AS held"),
                    completion: .callback { [self] result in
                        guard self.driver === driver else { return }
                        pendingLocks.remove(key)
                        lockAttempts += 1
                        let held: Bool
                        switch result {
                        case .success(let rows):
                            held = (try? rows.first?.decode("held", as: Bool.self)) == true
                        case .failure(let error):
                            logger.warning("taking a session lock failed", ["error": .string(error.description)])
                            held = false
                        }
                        guard let subscribers = lockSubscribers[key] else {
                            // Nobody wants it any more.
                            if held {
                                driver.enqueue(
                                    ConnectionOperation(
                                        command: .extended("SELECT pg_advisory_unlock(\(key))"),
                                        completion: .callback { _ in }))
                            }
                            return
                        }
                        if held {
                            heldLocks.insert(key)
                            for continuation in subscribers.values { continuation.yield(.acquired) }
                        } else {
                            scheduleLockRetry()
                        }
                    }))
        }
    }

    private func scheduleLockRetry() {
        guard lockRetryTimer == nil, !isShutDown else { return }
        lockRetryTimer = loop.scheduleTimer(after: lockRetryInterval) { [self] in
            lockRetryTimer = nil
            guard !isShutDown, let driver, driver.isReady else { return }
            tryLocks(on: driver)
        }
    }

    /// Locks the current connection holds, and how many lock attempts were answered so far (for tests).
    func lockState() async -> (held: Set<Int64>, attempts: Int) {
        await withUnsafeContinuation { continuation in
            onLoop { [self] in continuation.resume(returning: (heldLocks, lockAttempts)) }
        }
    }

    /// The session connection's server process id, or nil while disconnected.
    func backendPID() async -> Int? {
        await withUnsafeContinuation { continuation in
            onLoop { [self] in
                continuation.resume(returning: driver.flatMap { $0.isReady ? Int($0.backendPID) : nil })
            }
        }
    }

    // MARK: Connection

    private func connect() {
        nextConnectionID += 1
        let driver = ConnectionDriver(loop: loop, id: nextConnectionID, statementCacheCapacity: 0, delegate: self)
        driver.onNotification = { [unowned self] channel, payload in
            guard let channelSubscribers = subscribers[channel] else { return }
            for continuation in channelSubscribers.values {
                continuation.yield(.notification(channel: channel, payload: payload))
            }
        }
        self.driver = driver
        driver.connect(conninfo: configuration.conninfo, timeout: configuration.connectTimeout, resolver: resolver)
    }

    private func listen(_ channels: [String], on driver: ConnectionDriver, thenAnnounceReconnect: Bool = false) {
        let wanted = channels.filter { !listening.contains($0) && !pendingListen.contains($0) }
        if wanted.isEmpty && !thenAnnounceReconnect { return }
        pendingListen.formUnion(wanted)
        let sql =
            wanted.isEmpty ? "SELECT 1" : wanted.map { "LISTEN \(LibPQ.quoteIdentifier($0))" }.joined(separator: "; ")
        driver.enqueue(
            ConnectionOperation(
                command: .simple(sql),
                completion: .callback { [self] result in
                    guard self.driver === driver else { return }
                    pendingListen.subtract(wanted)
                    switch result {
                    case .success:
                        listening.formUnion(wanted)
                        backoff = .milliseconds(50)
                        if thenAnnounceReconnect {
                            for continuation in subscribers.values.flatMap(\.values) {
                                continuation.yield(.reconnected)
                            }
                        }
                    case .failure(let error):
                        logger.error("LISTEN failed", ["error": .string(error.description)])
                        driver.close(error: error)
                    }
                }))
    }

    func connectionEstablished(_ connection: ConnectionDriver) {
        let reconnect = hasConnectedBefore
        hasConnectedBefore = true
        if reconnect { logger.info("session connection restored") }
        listen(Array(subscribers.keys), on: connection, thenAnnounceReconnect: reconnect)
        tryLocks(on: connection)
    }

    func connection(_ connection: ConnectionDriver, failedToConnect error: PostgresError) {
        guard driver === connection else { return }
        driver = nil
        logger.debug("session connection failed", ["error": .string(error.description)])
        scheduleReconnect()
    }

    func connection(_ connection: ConnectionDriver, closedWith error: PostgresError) {
        guard driver === connection else { return }
        driver = nil
        listening.removeAll()
        pendingListen.removeAll()
        pendingLocks.removeAll()
        if let lockRetryTimer { loop.cancelTimer(lockRetryTimer) }
        lockRetryTimer = nil
        for key in heldLocks {
            guard let holders = lockSubscribers[key] else { continue }
            for continuation in holders.values { continuation.yield(.lost) }
        }
        heldLocks.removeAll()
        if !isShutDown { logger.warning("session connection lost", ["error": .string(error.description)]) }
        scheduleReconnect()
    }

    func connection(_ connection: ConnectionDriver, finished query: PooledQuery, with result: QueryResult) {
        query.continuation.resume(returning: result)
    }

    private func scheduleReconnect() {
        guard !isShutDown, hasSubscribers, reconnectTimer == nil else { return }
        let delay = backoff + .nanoseconds(Int64.random(in: 0...Int64(backoff.nanosecondsClamped / 2)))
        backoff = min(backoff * 2, .seconds(1))
        reconnectTimer = loop.scheduleTimer(after: delay) { [self] in
            reconnectTimer = nil
            guard !isShutDown, driver == nil, hasSubscribers else { return }
            connect()
        }
    }

    // MARK: Shutdown

    func shutDown() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            onLoop { [self] in
                isShutDown = true
                if let reconnectTimer { loop.cancelTimer(reconnectTimer) }
                reconnectTimer = nil
                if let lockRetryTimer { loop.cancelTimer(lockRetryTimer) }
                lockRetryTimer = nil
                let all = subscribers.values.flatMap(\.values)
                subscribers.removeAll()
                for continuation in all { continuation.finish() }
                let lockHolders = lockSubscribers.values.flatMap(\.values)
                lockSubscribers.removeAll()
                heldLocks.removeAll()
                for continuation in lockHolders { continuation.finish() }
                driver?.close()
                driver = nil
                continuation.resume()
            }
        }
    }
}
