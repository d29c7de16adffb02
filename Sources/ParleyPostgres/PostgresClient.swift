import ParleyNet
import ParleyObservability
import Synchronization

/// The entry point to PostgreSQL: a connection pool split across the event loops, transactions with
/// retry, LISTEN/NOTIFY. Thread-safe; create one per process.
///
/// A query from a task running on event loop L (HTTP handlers do) uses L's connections on L's thread,
/// with no thread hop; from anywhere else it goes to the next loop in turn.
public final class PostgresClient: Sendable {
    public let configuration: PostgresConfiguration
    let group: EventLoopGroup
    let logger: Logger
    let pools: [LoopPool]
    let session: SessionConnection
    let transactionIDFlush: TransactionIDFlush

    public init(
        configuration: PostgresConfiguration, group: EventLoopGroup, logger: Logger,
        metrics: MetricsRegistry? = nil
    ) {
        self.configuration = configuration
        self.group = group
        self.logger = logger
        let loops = group.loops
        let resolver = HostResolver(conninfo: configuration.conninfo)
        let flush = TransactionIDFlush()
        transactionIDFlush = flush
        pools = loops.enumerated().map { index, loop in
            LoopPool(
                loop: loop, maxConnections: configuration.connectionsPerLoop(index: index, loopCount: loops.count),
                configuration: configuration, resolver: resolver, logger: logger, reconnected: flush.forget)
        }
        session = SessionConnection(
            loop: group.next(), configuration: configuration, resolver: resolver, logger: logger,
            lockRetryInterval: configuration.sessionLockRetryInterval)
        if let metrics {
            let pools = self.pools
            metrics.gaugeFunction("parley_db_pool_connections", help: "Database connections by state.") {
                let stats = PostgresClient.statistics(of: pools)
                return [
                    (["state": "in_use"], Double(stats.inUse)), (["state": "idle"], Double(stats.idle)),
                    (["state": "opening"], Double(stats.total - stats.inUse - stats.idle)),
                ]
            }
            metrics.gaugeFunction("parley_db_pool_waiting", help: "Requests waiting for a database connection.") {
                [([:], Double(PostgresClient.statistics(of: pools).waiting))]
            }
        }
    }

    /// The pool of the loop the caller runs on, else the next loop's.
    @inline(__always)
    func currentPool() -> LoopPool {
        if let loop = EventLoop.current, loop.index < pools.count, pools[loop.index].loop === loop {
            return pools[loop.index]
        }
        let loop = group.next()
        if loop.index < pools.count, pools[loop.index].loop === loop { return pools[loop.index] }
        return pools.first { $0.loop === loop } ?? pools[0]
    }

    // MARK: Queries

    /// Runs one statement on `connection` (inside its caller's transaction) when one is given, else on a pooled
    /// connection: for repository functions that serve both.
    public func query(_ query: PostgresQuery, on connection: PostgresConnection?) async throws(PostgresError)
        -> PostgresRows
    {
        if let connection { return try await connection.query(query) }
        return try await self.query(query)
    }

    /// Runs one statement on a pooled connection. Fails with `.unavailable` when the database cannot be
    /// reached, `.timeout` when no connection is free within `acquireTimeout`, `.server` for SQL errors.
    public func query(_ query: PostgresQuery) async throws(PostgresError) -> PostgresRows {
        let pool = currentPool()
        let result = await withUnsafeContinuation { (continuation: QueryContinuation) in
            let request = LoopPool.Request.query(PooledQuery(query: query, continuation: continuation, attempt: 1))
            if pool.loop.inEventLoop {
                pool.submit(request)
            } else {
                pool.loop.execute { pool.submit(request) }
            }
        }
        return try result.get()
    }

    /// Leases a connection for several statements (same session: temporary tables, advisory locks).
    /// It is back in the pool when `body`'s result or error reaches the caller; an open transaction is rolled back.
    public func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await lease().get()
        do {
            let value = try await body(connection)
            await connection.release()
            return value
        } catch {
            await connection.release()
            throw error
        }
    }

    func lease() async -> Result<PostgresConnection, PostgresError> {
        let pool = currentPool()
        return await withUnsafeContinuation { continuation in
            pool.onLoop { pool.submit(.lease(continuation)) }
        }
    }

    /// `SELECT 1` for readiness probes: fails fast (`.unavailable`) when the database is down.
    public func ping() async throws(PostgresError) {
        _ = try await query("SELECT 1")
    }

    // MARK: LISTEN / NOTIFY

    /// Notifications on `channel`, through one listening connection shared by the client. After that
    /// connection is lost and re-established (with backoff) the stream yields `.reconnected`: anything sent
    /// meanwhile was missed, so consumers should resync. Cancel the iteration to unsubscribe.
    public func listen(_ channel: String) -> AsyncStream<PostgresNotificationEvent> {
        session.subscribe(channel)
    }

    /// A session advisory lock (`pg_try_advisory_lock(key)`) held on the client's session connection for as long as the
    /// stream is iterated: it yields `.acquired` once the lock is taken (tried again every few seconds while another
    /// session holds it) and `.lost` when the connection is lost (the server then released it; it is tried again
    /// after the reconnect). Ending the iteration unlocks it. For work one client of a deployment should do at a
    /// time, where two at once would only duplicate effort: a lost connection is noticed late, so the stream does
    /// not make holders exclusive at every instant.
    public func sessionLock(_ key: Int64) -> AsyncStream<SessionLockEvent> {
        session.subscribeLock(key)
    }

    /// `pg_notify(channel, payload)`: delivered to listeners when the surrounding transaction commits.
    public func notify(_ channel: String, payload: String) async throws(PostgresError) {
        _ = try await query("SELECT pg_notify(\(channel), \(payload))")
    }

    // MARK: Statistics and lifecycle

    /// A snapshot of the pool summed over all loops (safe from any thread).
    public var poolStatistics: PostgresPoolStatistics { Self.statistics(of: pools) }

    static func statistics(of pools: [LoopPool]) -> PostgresPoolStatistics {
        var sum = PostgresPoolStatistics()
        for pool in pools {
            let s = pool.counters.snapshot
            sum.total += s.total
            sum.inUse += s.inUse
            sum.idle += s.idle
            sum.waiting += s.waiting
        }
        return sum
    }

    /// Fails waiting requests with `.closed`, closes idle connections and the session connection, and waits (up to
    /// `acquireTimeout`) for leased connections to come back before closing them too.
    public func shutdown() async {
        await session.shutDown()
        let grace = configuration.acquireTimeout
        await withTaskGroup(of: Void.self) { group in
            for pool in pools {
                group.addTask {
                    await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                        pool.onLoop { pool.shutDown(grace: grace) { continuation.resume() } }
                    }
                }
            }
        }
    }
}

extension PostgresClient {
    /// Waits until the shared listening connection LISTENs to `channel` (after `listen(channel)`), at most
    /// `timeout`; whether it does. Notifications sent before that moment are not delivered, so a subscriber that
    /// must not miss any (an instance about to serve) waits here first.
    public func waitUntilListening(_ channel: String, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if await session.listeningChannels().contains(channel) { return true }
            if ContinuousClock.now >= deadline || Task.isCancelled { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
