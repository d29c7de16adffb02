import ParleyNet
import ParleyObservability

/// What a `listen` stream yields.
public enum PostgresNotificationEvent: Sendable, Hashable {
    /// A `NOTIFY` / `pg_notify` on the channel, in the order the server delivered them.
    case notification(channel: String, payload: String)
    /// The listening connection was lost and is back: notifications sent in between were missed.
    case reconnected
}

/// The one connection a client uses for LISTEN. It connects on the first subscription, LISTENs to every
/// channel that has subscribers, and after losing the connection reconnects with exponential backoff
/// (50 ms doubling to 1 s, jittered by up to half), LISTENs again and tells every subscriber `.reconnected`.
/// The cap is short because every realtime event between instances waits for this connection: after a
/// database restart the pool is back at the first query, and the feed should follow within about a second
/// (one attempt a second per instance costs the database nothing).
///
/// Loop-confined like `LoopPool`; `@unchecked Sendable` so it can be named in closures sent to its loop.
final class PostgresListener: @unchecked Sendable, ConnectionDelegate {
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

    init(loop: EventLoop, configuration: PostgresConfiguration, resolver: HostResolver, logger: Logger) {
        self.loop = loop
        self.configuration = configuration
        self.resolver = resolver
        self.logger = logger.with("component", "listener")
    }

    private func onLoop(_ work: @escaping @Sendable () -> Void) {
        if loop.inEventLoop { work() } else { loop.execute(work) }
    }

    // MARK: Subscribers

    func subscribe(_ channel: String) -> AsyncStream<PostgresNotificationEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PostgresNotificationEvent.self)
        onLoop { [self] in
            guard !isShutDown else {
                continuation.finish()
                return
            }
            nextSubscriberID += 1
            let id = nextSubscriberID
            subscribers[channel, default: [:]][id] = continuation
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                self.loop.execute { self.unsubscribe(id: id, channel: channel) }
            }
            if let driver, driver.isReady {
                listen([channel], on: driver)
            } else if driver == nil && reconnectTimer == nil {
                connect()
            }
        }
        return stream
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

    /// The listening connection's server process id, or nil while disconnected.
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
        if reconnect { logger.info("listening connection restored") }
        listen(Array(subscribers.keys), on: connection, thenAnnounceReconnect: reconnect)
    }

    func connection(_ connection: ConnectionDriver, failedToConnect error: PostgresError) {
        guard driver === connection else { return }
        driver = nil
        logger.debug("listening connection failed", ["error": .string(error.description)])
        scheduleReconnect()
    }

    func connection(_ connection: ConnectionDriver, closedWith error: PostgresError) {
        guard driver === connection else { return }
        driver = nil
        listening.removeAll()
        pendingListen.removeAll()
        if !isShutDown { logger.warning("listening connection lost", ["error": .string(error.description)]) }
        scheduleReconnect()
    }

    func connection(_ connection: ConnectionDriver, finished query: PooledQuery, with result: QueryResult) {
        query.continuation.resume(returning: result)
    }

    private func scheduleReconnect() {
        guard !isShutDown, !subscribers.isEmpty, reconnectTimer == nil else { return }
        let delay = backoff + .nanoseconds(Int64.random(in: 0...Int64(backoff.nanosecondsClamped / 2)))
        backoff = min(backoff * 2, .seconds(1))
        reconnectTimer = loop.scheduleTimer(after: delay) { [self] in
            reconnectTimer = nil
            guard !isShutDown, driver == nil, !subscribers.isEmpty else { return }
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
                let all = subscribers.values.flatMap(\.values)
                subscribers.removeAll()
                for continuation in all { continuation.finish() }
                driver?.close()
                driver = nil
                continuation.resume()
            }
        }
    }
}
