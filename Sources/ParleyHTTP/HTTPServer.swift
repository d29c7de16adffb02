import CParleyLinux
import Glibc
import ParleyNet
import ParleyObservability
import Synchronization

public struct HTTPServerConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: UInt16 = 8080
    public var headerTimeout: Duration = .seconds(10)
    public var idleTimeout: Duration = .seconds(60)
    /// A connection whose peer accepts no bytes for this long is dropped.
    public var writeTimeout: Duration = .seconds(60)
    public var maxHeaderBytes: Int = 16 * 1024
    public var defaultBodyLimit: Int = 1 << 20
    /// Past this many unsent bytes a connection stops reading (HTTP) or reports backpressure (upgraded).
    public var maxPendingOutputBytes: Int = 1 << 20
    /// A request body must arrive at this average rate (bytes per second, counted from its head) once
    /// `bodyGracePeriod` has passed, else 408 and close; 0 disables it.
    public var minimumBodyBytesPerSecond: Int = 1024
    public var bodyGracePeriod: Duration = .seconds(10)
    /// Buffered (not streamed) request bodies of every connection together may hold this many bytes; a body that
    /// would go past it is answered 503 (1015) and its connection closed.
    public var bufferedBodyBudgetBytes: Int = 256 << 20
    public var maxConnections: Int = 100_000
    public var shutdownGracePeriod: Duration = .seconds(10)

    public init() {}
}

/// The HTTP server: one listening socket per event loop (SO_REUSEPORT), each loop accepting and
/// serving its own connections.
public final class HTTPServer: Sendable {
    public let configuration: HTTPServerConfiguration
    private let group: EventLoopGroup
    /// The routes and middleware this server answers with (read by tests that compare them with openapi.yaml).
    public let responder: HTTPResponder
    private let logger: Logger
    private let shared: SharedServerState
    private let loopServers: [LoopServer]
    private let boundPort = Atomic<Int>(0)
    let openConnections: Gauge

    public convenience init(
        configuration: HTTPServerConfiguration, group: EventLoopGroup, responder: HTTPResponder,
        logger: Logger, metrics: MetricsRegistry
    ) {
        self.init(
            configuration: configuration, group: group, responder: responder, logger: logger, metrics: metrics,
            openFilesLimit: OpenFilesLimit.current, accept: Socket.accept)
    }

    /// `openFilesLimit` and `accept` are the process's limit and accept4; tests pass their own.
    init(
        configuration: HTTPServerConfiguration, group: EventLoopGroup, responder: HTTPResponder,
        logger: Logger, metrics: MetricsRegistry, openFilesLimit: Int,
        accept: @escaping @Sendable (Int32) -> Socket.AcceptResult
    ) {
        var configuration = configuration
        let allowed = Self.connectionsAllowed(byOpenFilesLimit: openFilesLimit)
        if configuration.maxConnections > allowed {
            // Past the descriptor limit accept fails (EMFILE) before our limit refuses anyone: keep the limit below it
            // so that the surplus gets a 503 and the process keeps descriptors for its database and files.
            logger.warning(
                "connection limit lowered to fit the open-files limit",
                [
                    "configured": .int(configuration.maxConnections), "open_files_limit": .int(openFilesLimit),
                    "max_connections": .int(allowed),
                ])
            configuration.maxConnections = allowed
        }
        self.configuration = configuration
        self.group = group
        self.responder = responder
        self.logger = logger
        let open = metrics.gauge("parley_http_open_connections", help: "Open HTTP and upgraded connections.").labels()
        openConnections = open
        let protocolErrors = metrics.counter(
            "parley_http_protocol_errors_total",
            help: "Requests refused before routing (parse errors, timeouts).",
            labels: ["status"])
        let acceptPauses = metrics.counter(
            "parley_http_accept_pauses_total",
            help: "Times a listener stopped accepting for a while (out of descriptors or memory)."
        )
        .labels()
        let shared = SharedServerState(
            maxConnections: configuration.maxConnections, accept: accept,
            acceptPauses: acceptPauses, bodyBudget: BodyBudget(limit: configuration.bufferedBodyBudgetBytes))
        loopServers = group.loops.map {
            LoopServer(
                loop: $0, configuration: configuration, responder: responder, logger: logger, openGauge: open,
                protocolErrors: protocolErrors, shared: shared)
        }
        shared.setLoopServers(loopServers)
        self.shared = shared
    }

    /// The most connections a process with `limit` open files should hold: a tenth of the limit (at least 64) stays
    /// free for everything else (database connections, files being sent or uploaded, the log, epoll and eventfds).
    static func connectionsAllowed(byOpenFilesLimit limit: Int) -> Int {
        guard limit < Int.max / 2 else { return Int.max }
        return max(1, limit - max(64, limit / 10))
    }

    /// Bytes of buffered request bodies held now (tests).
    var bufferedBodyBytes: Int { shared.bodyBudget.used }

    /// Connections per event loop (tests of the balancing; racy while connections come and go).
    var connectionsPerLoop: [Int] { loopServers.map { $0.openCount.load(ordering: .relaxed) } }

    /// The port actually bound (useful with port 0).
    public var port: UInt16 { UInt16(boundPort.load(ordering: .relaxed)) }

    /// Binds and starts accepting on every loop. Returns the bound port.
    @discardableResult
    public func start() async throws -> UInt16 {
        var port = configuration.port
        for loopServer in loopServers {
            let bindPort = port
            let actual = try await loopServer.loop.submit {
                try loopServer.startListening(host: self.configuration.host, port: bindPort)
            }
            port = actual
        }
        boundPort.store(Int(port), ordering: .relaxed)
        logger.info(
            "http server listening",
            [
                "host": .string(configuration.host), "port": .int(Int(port)),
                "loops": .int(loopServers.count),
            ])
        return port
    }

    /// Graceful shutdown: stop accepting, close idle connections, let in-flight requests finish (their
    /// answers carry `Connection: close`) for up to `grace`, then close whatever is left.
    public func shutdown(grace: Duration? = nil) async {
        let grace = grace ?? configuration.shutdownGracePeriod
        for loopServer in loopServers {
            _ = try? await loopServer.loop.submit { loopServer.beginShutdown() }
        }
        let deadline = Instant.now() + grace
        while Instant.now() < deadline {
            var remaining = 0
            for loopServer in loopServers {
                remaining += (try? await loopServer.loop.submit { loopServer.connectionCount }) ?? 0
            }
            if remaining == 0 { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        for loopServer in loopServers {
            _ = try? await loopServer.loop.submit { loopServer.closeAll() }
        }
        logger.info("http server stopped")
    }
}

/// Limits shared by every loop.
final class SharedServerState: Sendable {
    let maxConnections: Int
    let connections = Atomic<Int>(0)
    let accept: @Sendable (Int32) -> Socket.AcceptResult
    let acceptPauses: Counter
    let bodyBudget: BodyBudget
    /// Every loop's server, for balancing accepted connections (set once, before listening).
    private let loops = Mutex<[LoopServer]>([])

    init(
        maxConnections: Int, accept: @escaping @Sendable (Int32) -> Socket.AcceptResult, acceptPauses: Counter,
        bodyBudget: BodyBudget
    ) {
        self.maxConnections = maxConnections
        self.accept = accept
        self.acceptPauses = acceptPauses
        self.bodyBudget = bodyBudget
    }

    func setLoopServers(_ servers: [LoopServer]) {
        loops.withLock { $0 = servers }
    }

    /// The loop that should take a connection `acceptor` just accepted: the acceptor itself unless another loop holds
    /// at least two fewer connections. The kernel spreads connections over the loops' listeners (SO_REUSEPORT) by a
    /// hash, which leaves one loop with noticeably more of a burst of connections than another (64 split 38/26 is
    /// not rare), and each loop has its own database pool: the busier loop's requests then queue longer.
    func placement(acceptedBy acceptor: LoopServer) -> LoopServer {
        var best = acceptor
        var bestCount = acceptor.openCount.load(ordering: .relaxed)
        for server in loops.withLock({ $0 }) where server !== acceptor {
            let count = server.openCount.load(ordering: .relaxed)
            if count + 1 < bestCount {
                best = server
                bestCount = count
            }
        }
        return best
    }
}

/// One loop's share of the server: its listener, its connections, its scratch buffer and date cache.
/// Loop-confined.
final class LoopServer: IOHandler, @unchecked Sendable {
    let loop: EventLoop
    let configuration: HTTPServerConfiguration
    /// Each connection's state machine is configured from this (derived once, not per connection).
    let machineConfiguration: HTTPConnectionStateMachine.Configuration
    let responder: HTTPResponder
    let logger: Logger
    let serializer = ResponseSerializer()
    let readScratch: UnsafeMutableRawBufferPointer
    /// Responses up to this size are serialized here and sent straight away: no buffer per response, and a
    /// connection copies only what the socket did not take. Loop-confined, like everything in this class.
    let writeScratch: UnsafeMutableBufferPointer<UInt8>
    private let openGauge: Gauge
    private let protocolErrors: CounterFamily
    private let shared: SharedServerState
    private var listenFD: Int32 = -1
    private var connections: [Int32: HTTPConnection] = [:]
    private(set) var isShuttingDown = false
    private var cachedDateSecond: time_t = 0
    private var cachedDate: [UInt8] = []
    private var sweeping = false
    private var acceptBackoff = AcceptBackoff()
    private var acceptPaused = false
    private var lastAcceptWarning: Instant?

    init(
        loop: EventLoop, configuration: HTTPServerConfiguration, responder: HTTPResponder, logger: Logger,
        openGauge: Gauge, protocolErrors: CounterFamily, shared: SharedServerState
    ) {
        self.loop = loop
        self.configuration = configuration
        machineConfiguration = HTTPConnectionStateMachine.Configuration(configuration)
        self.responder = responder
        self.logger = logger
        self.openGauge = openGauge
        self.protocolErrors = protocolErrors
        self.shared = shared
        readScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        writeScratch = UnsafeMutableBufferPointer.allocate(capacity: 64 * 1024)
    }

    deinit {
        readScratch.deallocate()
        writeScratch.deallocate()
    }

    var connectionCount: Int { connections.count }
    /// Connections this loop holds or is about to adopt; read by the other loops' acceptors (balancing).
    let openCount = Atomic<Int>(0)

    func startListening(host: String, port: UInt16) throws -> UInt16 {
        let (fd, actual) = try Socket.listen(host: host, port: port, reusePort: true)
        listenFD = fd
        try loop.register(fd: fd, events: .readable, handler: self)
        if !sweeping {
            sweeping = true
            // A coarse sweep is cheaper than a timer per connection and precise enough for 10 s / 60 s limits.
            // It holds the server strongly (as the loop's handler table does while it listens; docs/ARCHITECTURE.md,
            // "No weak references to hot objects") and ends itself once the listener is closed and no connection is
            // left.
            loop.scheduleRepeating(every: .milliseconds(500)) { [self] in
                let now = Instant.now()
                for connection in Array(self.connections.values) { connection.checkTimeouts(now: now) }
                return self.listenFD >= 0 || !self.connections.isEmpty
            }
        }
        return actual
    }

    /// The listener is readable: accept everything pending.
    func ioReady(readable: Bool, writable: Bool, hangup: Bool) {
        guard listenFD >= 0, !acceptPaused else { return }
        for _ in 0..<256 {
            let fd: Int32, peer: String
            switch shared.accept(listenFD) {
            case .accepted(let acceptedFD, let address):
                acceptBackoff.connectionAccepted()
                (fd, peer) = (acceptedFD, address)
            case .failed(let code):
                switch acceptBackoff.acceptFailed(errno: code) {
                case .acceptNext: continue
                case .wait: return
                case .pause(let delay):
                    pauseAccepting(for: delay, errno: code)
                    return
                }
            }
            if shared.connections.add(1, ordering: .relaxed).newValue > shared.maxConnections {
                // Over the limit: refuse at once rather than degrade everyone (RFC 9110 §15.6.4).
                shared.connections.subtract(1, ordering: .relaxed)
                let answer = serializer.serialize(
                    .error(.serviceUnavailable.with(message: "too many connections")),
                    requestMethod: .GET, requestVersion: .http1_1, keepAlive: false,
                    date: dateHeader())
                answer.withUnsafeBytes { _ = send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                Glibc.close(fd)
                protocolErrors.labels("503").increment()
                continue
            }
            let target = shared.placement(acceptedBy: self)
            target.openCount.add(1, ordering: .relaxed)
            if target === self {
                adopt(fd: fd, peer: peer)
            } else {
                target.loop.execute { target.adopt(fd: fd, peer: peer) }
            }
        }
    }

    /// Takes an accepted connection onto this loop (`openCount` already counts it). On the loop's thread.
    func adopt(fd: Int32, peer: String) {
        guard !isShuttingDown else {
            openCount.subtract(1, ordering: .relaxed)
            shared.connections.subtract(1, ordering: .relaxed)
            Glibc.close(fd)
            return
        }
        let connection = HTTPConnection(fd: fd, remoteAddress: peer, host: self)
        do {
            try loop.register(fd: fd, events: .readable, handler: connection)
        } catch {
            openCount.subtract(1, ordering: .relaxed)
            shared.connections.subtract(1, ordering: .relaxed)
            Glibc.close(fd)
            return
        }
        connections[fd] = connection
        openGauge.add(1)
    }

    /// Stops watching the listener for `delay` (see `AcceptBackoff`); pending connections wait in the backlog.
    private func pauseAccepting(for delay: Duration, errno code: Int32) {
        acceptPaused = true
        loop.modify(fd: listenFD, events: [])
        shared.acceptPauses.increment()
        let now = Instant.now()
        if lastAcceptWarning.map({ now.since($0) >= .seconds(10) }) ?? true {
            lastAcceptWarning = now
            logger.warning(
                "accept failed: not accepting for a while",
                [
                    "error": .string(String(cString: strerror(code))), "errno": .int(Int(code)),
                    "pause_ms": .int(Int(delay / .milliseconds(1))),
                    "open_connections": .int(shared.connections.load(ordering: .relaxed)),
                ])
        }
        _ = loop.scheduleTimer(after: delay) { [self] in // strong: see the sweep in `startListening`
            guard self.acceptPaused else { return }
            self.acceptPaused = false
            guard self.listenFD >= 0 else { return }
            self.loop.modify(fd: self.listenFD, events: .readable) // level-triggered: the backlog wakes it
        }
    }

    func connectionClosed(_ connection: HTTPConnection) {
        if connections.removeValue(forKey: connection.fd) != nil {
            openCount.subtract(1, ordering: .relaxed)
            shared.connections.subtract(1, ordering: .relaxed)
            openGauge.add(-1)
        }
    }

    var bodyBudget: BodyBudget { shared.bodyBudget }

    func recordProtocolError(status: Int) {
        protocolErrors.labels(String(status)).increment()
    }

    func dateHeader() -> [UInt8] {
        let now = time(nil)
        if now != cachedDateSecond {
            cachedDateSecond = now
            cachedDate = Array(ResponseSerializer.httpDate(now).utf8)
        }
        return cachedDate
    }

    func beginShutdown() {
        isShuttingDown = true
        if listenFD >= 0 {
            loop.unregister(fd: listenFD)
            Glibc.close(listenFD)
            listenFD = -1
        }
        for connection in Array(connections.values) { connection.beginShutdown() }
    }

    func closeAll() {
        for connection in Array(connections.values) { connection.close() }
    }
}
