import CLibPQ
import ParleyNet
import ParleyObservability

/// One event loop's connections. Everything here runs on `loop`'s thread (callers elsewhere hop with
/// `execute`), so the state needs no lock; only the statistics are atomics. It is `@unchecked Sendable`
/// so that it can be named in closures sent to its loop.
final class LoopPool: @unchecked Sendable, ConnectionDelegate {
    enum Request {
        case query(PooledQuery)
        case lease(UnsafeContinuation<Result<PostgresConnection, PostgresError>, Never>)
    }

    let loop: EventLoop
    private let configuration: PostgresConfiguration
    private let resolver: HostResolver
    private let logger: Logger
    private var machine: PoolStateMachine<ConnectionDriver, Request>
    let counters = PoolCounters()
    /// Every driver this pool created and has not seen closed (to force-close leased ones at shutdown).
    private var drivers: [ObjectIdentifier: ConnectionDriver] = [:]
    private var nextConnectionID = 0
    private var connectFailureLogged = false
    private var drainedWaiters: [() -> Void] = []
    private let maxAttempts: Int
    /// Told when a connection opens after one closed (before it serves a request): the server it reaches may not
    /// be the one before (a failover).
    private let reconnected: @Sendable () -> Void
    private var lostAConnection = false

    init(
        loop: EventLoop, maxConnections: Int, configuration: PostgresConfiguration, resolver: HostResolver,
        logger: Logger, reconnected: @escaping @Sendable () -> Void = {}
    ) {
        self.loop = loop
        self.reconnected = reconnected
        self.configuration = configuration
        self.resolver = resolver
        self.logger = logger.with("event_loop", .int(loop.index))
        self.machine = PoolStateMachine(maxConnections: maxConnections, acquireTimeout: configuration.acquireTimeout)
        // A query is retried only when it never reached the server (its connection was found closed);
        // each dead connection can cause that once, so this bound is never the limiting factor in practice.
        self.maxAttempts = maxConnections + 1
    }

    /// Runs `work` on the loop: directly when already there.
    @inline(__always)
    func onLoop(_ work: @escaping @Sendable () -> Void) {
        if loop.inEventLoop { work() } else { loop.execute(work) }
    }

    // MARK: Requests

    func submit(_ request: Request) {
        switch machine.requestArrived(request, now: .now()) {
        case .run(let request, let connection):
            guard connection.isAliveForReuse() else {
                // Its close was reported to the machine; nothing was sent, so try again.
                submit(request)
                return
            }
            publish()
            run(request, on: connection)
        case .wait(let startConnect, let armTimer):
            if startConnect { self.startConnect() }
            if let armTimer { arm(armTimer) }
            publish()
        case .fail(let request, let kind):
            fail(request, PostgresError(kind: kind, message: "the PostgreSQL client is shut down"))
        }
    }

    private func run(_ request: Request, on connection: ConnectionDriver) {
        switch request {
        case .query(let pooled):
            connection.enqueue(ConnectionOperation(command: .extended(pooled.query), completion: .pooled(pooled)))
        case .lease(let continuation):
            continuation.resume(returning: .success(PostgresConnection(driver: connection, pool: self)))
        }
    }

    private func fail(_ request: Request, _ error: PostgresError) {
        switch request {
        case .query(let pooled): pooled.continuation.resume(returning: .failure(error))
        case .lease(let continuation): continuation.resume(returning: .failure(error))
        }
    }

    private func apply(_ action: PoolStateMachine<ConnectionDriver, Request>.ConnectionAction) {
        publish()
        switch action {
        case .run(let request, let connection): run(request, on: connection)
        case .park: break
        case .close(let connection): connection.close()
        }
    }

    /// Whether `release` would hand `connection` back without waiting for the server (no statement running,
    /// no transaction to roll back).
    func canTakeBackAtOnce(_ connection: ConnectionDriver) -> Bool {
        connection.isClosed || (!connection.isBusy && connection.transactionStatus == PQTRANS_IDLE)
    }

    /// A leased connection comes back. Inside a transaction it is rolled back first; if that is impossible
    /// (a statement still running, status unknown) it is closed rather than handed to someone else.
    /// `returned` runs once the connection is back in the pool or closed.
    func release(_ connection: ConnectionDriver, returned: @escaping () -> Void = {}) {
        guard !connection.isClosed else { return returned() }
        guard !connection.isBusy else {
            connection.close()
            return returned()
        }
        switch connection.transactionStatus {
        case PQTRANS_IDLE:
            apply(machine.connectionReleased(connection))
            returned()
        case PQTRANS_INTRANS, PQTRANS_INERROR:
            connection.enqueue(
                ConnectionOperation(
                    command: .simple("ROLLBACK"),
                    completion: .callback { [self] result in
                        defer { returned() }
                        guard !connection.isClosed else { return }
                        if case .success = result, connection.transactionStatus == PQTRANS_IDLE {
                            apply(machine.connectionReleased(connection))
                        } else {
                            connection.close()
                        }
                    }))
        default:
            connection.close()
            returned()
        }
    }

    private func arm(_ deadline: Instant) {
        let now = Instant.now()
        let delay: Duration = deadline > now ? .nanoseconds(Int64(deadline.nanoseconds - now.nanoseconds)) : .zero
        loop.scheduleTimer(after: delay) { [self] in
            let (expired, rearm) = machine.timerFired(now: .now())
            if let rearm { arm(rearm) }
            publish()
            let timeout = configuration.acquireTimeout
            for request in expired {
                fail(
                    request,
                    PostgresError(kind: .timeout, message: "no database connection became free within \(timeout)"))
            }
        }
    }

    // MARK: Connections

    private func startConnect() {
        nextConnectionID += 1
        let driver = ConnectionDriver(
            loop: loop, id: nextConnectionID,
            statementCacheCapacity: configuration.statementCacheCapacity, delegate: self)
        drivers[ObjectIdentifier(driver)] = driver
        driver.connect(conninfo: configuration.conninfo, timeout: configuration.connectTimeout, resolver: resolver)
    }

    func connectionEstablished(_ connection: ConnectionDriver) {
        if lostAConnection {
            lostAConnection = false
            reconnected()
        }
        if connectFailureLogged {
            connectFailureLogged = false
            logger.info("database connection restored")
        }
        logger.debug(
            "database connection opened", ["connection": .int(connection.id), "pid": .int(Int(connection.backendPID))])
        apply(machine.connectionEstablished(connection))
    }

    func connection(_ connection: ConnectionDriver, failedToConnect error: PostgresError) {
        drivers[ObjectIdentifier(connection)] = nil
        // One warning per outage, not one per attempt.
        if !connectFailureLogged {
            connectFailureLogged = true
            logger.warning("database connection failed", ["error": .string(error.description)])
        } else {
            logger.debug("database connection failed", ["error": .string(error.description)])
        }
        let (failed, startConnect) = machine.connectFailed()
        publish()
        if startConnect { self.startConnect() }
        if let failed { fail(failed, error) }
        checkDrained()
    }

    func connection(_ connection: ConnectionDriver, closedWith error: PostgresError) {
        drivers[ObjectIdentifier(connection)] = nil
        lostAConnection = true
        logger.debug(
            "database connection closed", ["connection": .int(connection.id), "reason": .string(error.description)])
        let replace = machine.connectionClosed(connection)
        publish()
        if replace { startConnect() }
        checkDrained()
    }

    func connection(_ connection: ConnectionDriver, finished query: PooledQuery, with result: QueryResult) {
        release(connection)
        if case .failure(let error) = result, error.safeToRetry, query.attempt < maxAttempts, !machine.isShutDown {
            var retry = query
            retry.attempt += 1
            logger.debug("retrying a query whose connection was gone", ["attempt": .int(retry.attempt)])
            submit(.query(retry))
            return
        }
        query.continuation.resume(returning: result)
    }

    // MARK: Statistics and shutdown

    private func publish() {
        counters.total.store(machine.total, ordering: .relaxed)
        counters.inUse.store(machine.leased, ordering: .relaxed)
        counters.idle.store(machine.idle.count, ordering: .relaxed)
        counters.waiting.store(machine.waiting, ordering: .relaxed)
    }

    /// Fails waiters, closes idle connections and, after `grace`, any still leased; `completion` runs once
    /// every connection is closed.
    func shutDown(grace: Duration, completion: @escaping () -> Void) {
        let (close, failed) = machine.shutDown()
        drainedWaiters.append(completion)
        for request in failed { fail(request, .closed()) }
        for connection in close { connection.close() }
        publish()
        checkDrained()
        if !machine.isDrained {
            loop.scheduleTimer(after: grace) { [self] in
                for connection in Array(drivers.values) { connection.close() }
            }
        }
    }

    private func checkDrained() {
        guard machine.isDrained, !drainedWaiters.isEmpty else { return }
        let waiters = drainedWaiters
        drainedWaiters = []
        for waiter in waiters { waiter() }
    }
}
