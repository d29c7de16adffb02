import ParleyNet

/// The bookkeeping of one event loop's share of the pool, as a pure state machine: events in (a request
/// arrived, a connection was released, connecting failed, the clock passed a deadline), actions out.
/// `LoopPool` performs the actions. The clock is an argument, so timeouts are testable without waiting.
///
/// Policy: an idle connection serves a request at once (most recently used first, to keep few warm);
/// otherwise a new connection is started while below `maxConnections` and the request waits in FIFO
/// order until any connection is free or `acquireTimeout` passes. A failed connect fails the oldest
/// waiter at once, so callers learn that the database is down without waiting for the timeout.
struct PoolStateMachine<Connection: AnyObject, Request> {
    struct Waiter {
        let request: Request
        let deadline: Instant
    }

    enum RequestAction {
        case run(Request, on: Connection)
        /// The request waits; start a connection if `startConnect`, arm the timeout timer if `armTimer` is set.
        case wait(startConnect: Bool, armTimer: Instant?)
        case fail(Request, PostgresError.Kind)
    }

    enum ConnectionAction {
        case run(Request, on: Connection)
        /// Nobody is waiting: the connection is idle now.
        case park
        /// The pool is shutting down: close it.
        case close(Connection)
    }

    let maxConnections: Int
    let acquireTimeout: Duration
    private(set) var idle: [Connection] = []
    private(set) var leased = 0
    private(set) var connecting = 0
    private var waiters = RingBuffer<Waiter>()
    private var timerArmed = false
    private(set) var isShutDown = false

    init(maxConnections: Int, acquireTimeout: Duration) {
        self.maxConnections = max(1, maxConnections)
        self.acquireTimeout = acquireTimeout
    }

    /// Connections open, leased or being opened.
    var total: Int { idle.count + leased + connecting }
    var waiting: Int { waiters.count }
    /// Shut down and every connection closed.
    var isDrained: Bool { isShutDown && total == 0 }

    // MARK: Events

    mutating func requestArrived(_ request: Request, now: @autoclosure () -> Instant) -> RequestAction {
        if isShutDown { return .fail(request, .closed) }
        if let connection = idle.popLast() {
            leased += 1
            return .run(request, on: connection)
        }
        let deadline = now() + acquireTimeout
        waiters.append(Waiter(request: request, deadline: deadline))
        let startConnect = reserveConnectIfNeeded()
        var arm: Instant?
        if !timerArmed {
            timerArmed = true
            arm = deadline
        }
        return .wait(startConnect: startConnect, armTimer: arm)
    }

    mutating func connectionEstablished(_ connection: Connection) -> ConnectionAction {
        connecting -= 1
        return assign(connection)
    }

    /// A leased connection came back healthy and outside any transaction.
    mutating func connectionReleased(_ connection: Connection) -> ConnectionAction {
        leased -= 1
        return assign(connection)
    }

    /// Connecting failed: the oldest waiter fails now; `startConnect` asks for another attempt when more
    /// requests wait than connections are being opened.
    mutating func connectFailed() -> (fail: Request?, startConnect: Bool) {
        connecting -= 1
        let failed = waiters.popFirst()?.request
        return (failed, reserveConnectIfNeeded())
    }

    /// An open connection (idle or leased) closed. Returns true when a replacement should be started.
    mutating func connectionClosed(_ connection: Connection) -> Bool {
        if let index = idle.firstIndex(where: { $0 === connection }) {
            idle.remove(at: index)
        } else {
            leased -= 1
        }
        return reserveConnectIfNeeded()
    }

    /// The timeout timer fired: the waiters whose deadline passed fail with `.timeout`.
    mutating func timerFired(now: Instant) -> (expired: [Request], rearm: Instant?) {
        timerArmed = false
        var expired: [Request] = []
        // FIFO with one timeout for all: deadlines are in queue order.
        while let first = waiters.first, first.deadline <= now {
            expired.append(waiters.popFirst()!.request)
        }
        guard let next = waiters.first else { return (expired, nil) }
        timerArmed = true
        return (expired, next.deadline)
    }

    /// Stops serving: every waiter fails, the idle connections are to be closed (each close then comes back
    /// as `connectionClosed`), leased ones are closed when released.
    mutating func shutDown() -> (close: [Connection], fail: [Request]) {
        isShutDown = true
        return (idle, waiters.removeAll().map(\.request))
    }

    // MARK: Helpers

    private mutating func assign(_ connection: Connection) -> ConnectionAction {
        if isShutDown {
            leased += 1 // counted until its close is reported
            return .close(connection)
        }
        if let waiter = waiters.popFirst() {
            leased += 1
            return .run(waiter.request, on: connection)
        }
        idle.append(connection)
        return .park
    }

    private mutating func reserveConnectIfNeeded() -> Bool {
        guard !isShutDown, waiters.count > connecting, total < maxConnections else { return false }
        connecting += 1
        return true
    }
}
