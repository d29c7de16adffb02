import Glibc
import ParleyNet
import ParleyObservability
import Synchronization

/// A NATS client: one TCP connection on one event loop, driven by ``NATSConnectionStateMachine`` (what to do)
/// and ``NATSParser`` (what the server said). This class only does the I/O: non-blocking connect (names
/// resolved on a helper thread), reads bounded per wake-up, and one write buffer that publishes are encoded
/// into and that is flushed once per loop iteration, or at once past `flushThreshold`.
///
/// Loop-confined: every method runs on `loop`'s thread, and message handlers and events are called there.
/// Other threads use ``handle`` (a `NATSClientHandle`), whose calls hop to the loop.
public final class NATSClient: IOHandler {
    /// Unsent output past which a publish flushes at once instead of at the end of the loop iteration.
    static let flushThreshold = 64 * 1024
    /// Reads of `readBufferSize` per wake-up: a busy connection cannot starve the loop's other work.
    static let maxReadsPerWakeup = 4
    static let readBufferSize = 64 * 1024

    public let loop: EventLoop
    public let configuration: NATSConfiguration
    public var metrics: NATSClientMetrics { shared.metrics }
    let shared: NATSClientShared
    private let logger: Logger
    private let onEvent: (NATSClientEvent) -> Void

    private var machine: NATSConnectionStateMachine
    private var parser: NATSParser
    private var handlers: [UInt64: (NATSMessage) -> Void] = [:]
    private var closeWaiters: [() -> Void] = []
    private var flushWaiters: [UInt64: (Bool) -> Void] = [:]
    private var nextFlushToken: UInt64 = 0
    private var attemptsFailedInARow = 0

    private enum SocketState {
        case none
        case resolving
        case connecting
        case open
        /// A write failed: nothing more is read or written until the loss is reported on the next loop turn.
        case failed
    }

    private var socketState = SocketState.none
    private var fd: Int32 = -1
    /// Changes whenever a socket is closed: a lookup or a read loop of an older socket stops there.
    private var generation: UInt64 = 0
    private var output: [UInt8] = []
    /// Bytes of `output` already written.
    private var outputStart = 0
    private var watchingWritable = false
    private var flushScheduled = false
    private var timer: EventLoop.TimerID?
    private var timerDeadline: Instant?
    private let readBuffer: UnsafeMutableRawBufferPointer

    /// Events and message handlers run on `loop`. `metrics` nil: the client counts on its own.
    public init(
        configuration: NATSConfiguration, loop: EventLoop, logger: Logger, metrics: MetricsRegistry? = nil,
        onEvent: @escaping (NATSClientEvent) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger.with("component", "nats")
        self.onEvent = onEvent
        shared = NATSClientShared(metrics: NATSClientMetrics(registry: metrics))
        machine = NATSConnectionStateMachine(configuration: configuration, seed: UInt64.random(in: 0...UInt64.max))
        parser = NATSParser(maxPayloadCeiling: configuration.maxPayloadCeiling)
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
    }

    deinit {
        // Normally closed already: a registered socket or an armed timer keeps the client alive.
        if fd >= 0 { Glibc.close(fd) }
        readBuffer.deallocate()
    }

    /// This client as other threads see it.
    public var handle: NATSClientHandle { NATSClientHandle(client: self) }

    public var statistics: NATSClientStatistics { NATSClientStatistics(shared.metrics) }

    /// Whether a connection is confirmed now.
    public var isConnected: Bool { machine.isConnected }

    /// The latest INFO, if any server has sent one.
    public var serverInfo: NATSServerInfo? { machine.serverInfo }

    // MARK: API (loop thread)

    /// Starts connecting (to the first server, then round robin); events follow.
    public func start() {
        loop.preconditionInEventLoop()
        run(machine.started(now: .now()))
    }

    /// Publishes `payload` to `subject`: see ``NATSPublishResult`` for what became of it.
    @discardableResult
    public func publish(subject: String, replyTo: String? = nil, payload: UnsafeRawBufferPointer) -> NATSPublishResult {
        loop.preconditionInEventLoop()
        do throws(NATSError) {
            try NATSSubject.validatePublish(subject)
            if let replyTo { try NATSSubject.validatePublish(replyTo) }
        } catch {
            return .rejected(error)
        }
        let encodedCount = NATSEncoder.publishSize(subject: subject, replyTo: replyTo, payloadCount: payload.count)
        switch machine.publishRequested(
            payloadCount: payload.count, encodedCount: encodedCount, unsentOutput: output.count - outputStart)
        {
        case .write:
            NATSEncoder.publish(subject: subject, replyTo: replyTo, payload: payload, into: &output)
            shared.metrics.published.increment()
            outputGrew()
            return .sent
        case .pend:
            machine.appendPending {
                NATSEncoder.publish(subject: subject, replyTo: replyTo, payload: payload, into: &$0)
            }
            shared.metrics.published.increment()
            return .pending
        case .drop(let reason, let reportLost):
            shared.metrics.dropped.increment()
            if reportLost { report(.lost(reason)) }
            return .dropped(reason)
        case .reject(let error):
            return .rejected(error)
        }
    }

    @discardableResult
    public func publish(subject: String, replyTo: String? = nil, payload: [UInt8]) -> NATSPublishResult {
        payload.withUnsafeBytes { publish(subject: subject, replyTo: replyTo, payload: $0) }
    }

    /// Subscribes to `subject` (wildcards allowed), in queue group `queue` if given: the server then gives each
    /// message to one member of the group. `handler` runs on the loop. Kept across reconnections.
    public func subscribe(
        subject: String, queue: String? = nil, handler: @escaping (NATSMessage) -> Void
    ) throws(NATSError) -> NATSSubscriptionID {
        loop.preconditionInEventLoop()
        try Self.validateSubscription(subject: subject, queue: queue)
        let sid = shared.nextSubscriptionID()
        try register(sid, subject: subject, queue: queue, handler: handler)
        return sid
    }

    static func validateSubscription(subject: String, queue: String?) throws(NATSError) {
        try NATSSubject.validateSubscribe(subject)
        if let queue { try NATSSubject.validateQueueGroup(queue) }
    }

    func register(
        _ sid: NATSSubscriptionID, subject: String, queue: String?, handler: @escaping (NATSMessage) -> Void
    ) throws(NATSError) {
        let actions = try machine.subscribeRequested(sid, subject: subject, queue: queue)
        handlers[sid.rawValue] = handler
        run(actions)
    }

    /// Ends a subscription now, or once it has delivered `max` messages in all.
    public func unsubscribe(_ sid: NATSSubscriptionID, after max: Int? = nil) {
        loop.preconditionInEventLoop()
        run(machine.unsubscribeRequested(sid, max: max))
        if !machine.isSubscribed(sid) { handlers[sid.rawValue] = nil }
    }

    /// Drains and closes: UNSUB everything, wait for the server to confirm (messages already sent are still
    /// delivered), close. `completion` runs on the loop once closed. Nothing is retried afterwards.
    public func close(_ completion: (() -> Void)? = nil) {
        loop.preconditionInEventLoop()
        if machine.isClosed {
            completion?()
            return
        }
        if let completion { closeWaiters.append(completion) }
        run(machine.closeRequested(now: .now()))
    }

    /// Sends a PING and calls `completion` on the loop with true once the server has answered it, that is, has
    /// read everything written before; false if no connection is confirmed or it ends first.
    public func flush(_ completion: @escaping (Bool) -> Void) {
        loop.preconditionInEventLoop()
        nextFlushToken += 1
        flushWaiters[nextFlushToken] = completion
        run(machine.flushRequested(token: nextFlushToken))
    }

    // MARK: Actions

    private func run(_ actions: [NATSConnectionStateMachine.Action]) {
        // Callbacks go last: one that calls back into the client finds the socket work done.
        var callbacks: [NATSConnectionStateMachine.Action] = []
        for action in actions {
            switch action {
            case .connect(let server): openSocket(to: configuration.servers[server])
            case .send(let bytes): enqueue(bytes)
            case .closeSocket: closeSocket()
            case .report, .completeFlush: callbacks.append(action)
            }
        }
        updateTimer()
        for callback in callbacks {
            switch callback {
            case .report(let event):
                report(event)
            case .completeFlush(let token, let confirmed):
                flushWaiters.removeValue(forKey: token)?(confirmed)
            default:
                break
            }
        }
    }

    private func report(_ event: NATSClientEvent) {
        switch event {
        case .connected(let server):
            attemptsFailedInARow = 0
            logger.info("NATS connected", ["server": .string(server)])
        case .reconnected(let server, let possiblyLost):
            attemptsFailedInARow = 0
            shared.metrics.reconnects.increment()
            logger.info("NATS reconnected", ["server": .string(server), "possibly_lost": .bool(possiblyLost)])
        case .attemptFailed(let server, let error):
            // The first of a run is worth a warning (NATS down at start-up, a failover); the rest, every backoff
            // period while it stays down, only at debug.
            attemptsFailedInARow += 1
            logger.log(
                attemptsFailedInARow == 1 ? .warning : .debug, "NATS connection attempt failed",
                ["server": .string(server), "error": .string(error.description)])
        case .disconnected(let error):
            logger.warning("NATS connection lost", ["error": .string(error.description)])
        case .lost(let reason):
            logger.warning("NATS publishes dropped", ["reason": .string("\(reason)")])
        case .serverError(let error):
            logger.warning("NATS server error", ["error": .string(error.message)])
        case .closed(let error):
            if let error { logger.error("NATS client closed", ["error": .string(error.description)]) }
            handlers.removeAll()
        }
        onEvent(event)
        if case .closed = event {
            let waiters = closeWaiters
            closeWaiters.removeAll()
            for waiter in waiters { waiter() }
        }
    }

    private func updateTimer() {
        let deadline = machine.nextDeadline
        guard deadline != timerDeadline else { return }
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        timerDeadline = deadline
        guard let deadline else { return }
        // Strong: the timer keeps a reconnecting client alive (docs/ARCHITECTURE.md, "No weak references").
        timer = loop.scheduleTimer(after: deadline.since(.now())) { [self] in
            timer = nil
            timerDeadline = nil
            run(machine.timerFired(now: .now()))
        }
    }

    // MARK: Connecting

    private func openSocket(to server: NATSServerURL) {
        closeSocket()
        if let address = NATSSocketAddress.numeric(host: server.host, port: server.port) {
            connect(to: address)
            return
        }
        socketState = .resolving
        let expected = generation
        let this = handle
        NATSSocketAddress.resolve(host: server.host, port: server.port) { result in
            this.loop.execute {
                let client = this.client
                guard client.generation == expected, client.socketState == .resolving else { return }
                switch result {
                case .success(let address): client.connect(to: address)
                case .failure(let error): client.failToConnect(error)
                }
            }
        }
    }

    private func connect(to address: NATSSocketAddress) {
        let socketFD = socket(
            address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0)
        guard socketFD >= 0 else { return failToConnect(.connectFailed("socket: \(Self.describe(errno))")) }
        var one: Int32 = 1
        setsockopt(socketFD, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = address
        let rc = withUnsafePointer(to: &address.storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socketFD, $0, address.length) }
        }
        if rc != 0 && errno != EINPROGRESS {
            let error = errno
            Glibc.close(socketFD)
            return failToConnect(.connectFailed(Self.describe(error)))
        }
        do {
            try loop.register(fd: socketFD, events: .writable, handler: self)
        } catch {
            Glibc.close(socketFD)
            return failToConnect(.connectFailed("\(error)"))
        }
        fd = socketFD
        socketState = .connecting
        watchingWritable = true
    }

    /// Reports a failed attempt on the next loop turn, never from inside the action that started it.
    private func failToConnect(_ error: NATSError) {
        closeSocket()
        let expected = generation
        loop.executeInLoop { [self] in
            guard generation == expected else { return }
            run(machine.connectFailed(error, now: .now()))
        }
    }

    private func tcpConnected() {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { return failToConnect(.connectFailed(Self.describe(error))) }
        socketState = .open
        parser = NATSParser(maxPayloadCeiling: configuration.maxPayloadCeiling)
        setWritable(false)
    }

    private func closeSocket() {
        if fd >= 0 {
            loop.unregister(fd: fd)
            Glibc.close(fd)
            fd = -1
        }
        generation &+= 1
        socketState = .none
        output = []
        outputStart = 0
        watchingWritable = false
    }

    // MARK: IOHandler

    public func ioReady(readable: Bool, writable: Bool, hangup: Bool) {
        switch socketState {
        case .connecting:
            if writable || hangup { tcpConnected() }
        case .open:
            if writable { flush() }
            if readable || hangup { readAvailable() }
        case .none, .resolving, .failed:
            break
        }
    }

    // MARK: Reading

    private func readAvailable() {
        let current = generation
        for _ in 0..<Self.maxReadsPerWakeup {
            guard generation == current else { return }
            let count = read(fd, readBuffer.baseAddress!, readBuffer.count)
            if count > 0 {
                parser.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
                processOperations(generation: current)
                if count < readBuffer.count { return }
            } else if count == 0 {
                return run(machine.connectionLost(.connectionLost("closed by the server"), now: .now()))
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return
            } else {
                return run(machine.connectionLost(.connectionLost("read: \(Self.describe(errno))"), now: .now()))
            }
        }
    }

    private func processOperations(generation current: UInt64) {
        while generation == current {
            let operation: NATSServerOperation?
            do {
                operation = try parser.next()
            } catch {
                logger.warning("NATS protocol error", ["error": .string(error.description)])
                return run(machine.connectionLost(.protocolError(error), now: .now()))
            }
            guard let operation else { return }
            switch operation {
            case .message(let message):
                shared.metrics.received.increment()
                let sid = message.subscription
                guard machine.messageReceived(sid), let handler = handlers[sid.rawValue] else { continue }
                if !machine.isSubscribed(sid) { handlers[sid.rawValue] = nil }
                handler(message)
            case .ping:
                run(machine.pingReceived(now: .now()))
            case .pong:
                run(machine.pongReceived(now: .now()))
            case .info(let info):
                run(machine.infoReceived(info, now: .now()))
            case .ok:
                break
            case .error(let error):
                run(machine.errorReceived(error, now: .now()))
            }
        }
    }

    // MARK: Writing

    private func enqueue(_ bytes: [UInt8]) {
        guard socketState == .open else { return }
        output.append(contentsOf: bytes)
        outputGrew()
    }

    /// Flushes at once past the threshold, else once at the end of this loop iteration (many publishes, one write).
    private func outputGrew() {
        if output.count - outputStart >= Self.flushThreshold {
            flush()
        } else if !flushScheduled {
            flushScheduled = true
            loop.executeInLoop { [self] in
                flushScheduled = false
                flush()
            }
        }
    }

    private func flush() {
        guard socketState == .open, fd >= 0, outputStart < output.count else { return }
        let unsent = output.count - outputStart
        var written = 0
        var failure: Int32?
        output.withUnsafeBytes { bytes in
            let base = bytes.baseAddress! + outputStart
            while written < unsent {
                let n = send(fd, base + written, unsent - written, Int32(MSG_NOSIGNAL))
                if n > 0 {
                    written += n
                } else if n < 0 && errno == EINTR {
                    continue
                } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    break
                } else {
                    failure = n < 0 ? errno : EPIPE
                    break
                }
            }
        }
        if let failure {
            // Reported on the next turn: a flush runs inside other actions (a PONG's pending publishes, then its
            // event), which must not see the connection lost halfway through.
            socketState = .failed
            let expected = generation
            let error = NATSError.connectionLost("write: \(Self.describe(failure))")
            loop.executeInLoop { [self] in
                guard generation == expected else { return }
                run(machine.connectionLost(error, now: .now()))
            }
            return
        }
        outputStart += written
        if outputStart == output.count {
            output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
            outputStart = 0
            setWritable(false)
        } else {
            if outputStart >= Self.flushThreshold && outputStart * 2 >= output.count {
                output.removeSubrange(0..<outputStart)
                outputStart = 0
            }
            setWritable(true)
        }
    }

    private func setWritable(_ on: Bool) {
        guard on != watchingWritable, fd >= 0 else { return }
        watchingWritable = on
        loop.modify(fd: fd, events: on ? [.readable, .writable] : .readable)
    }

    private static func describe(_ error: Int32) -> String { String(cString: strerror(error)) }
}

@available(*, unavailable)
extension NATSClient: Sendable {}

/// What a client shares with other threads: subscription ids (so a handle can return one without waiting for
/// the loop) and the counters.
final class NATSClientShared: Sendable {
    let metrics: NATSClientMetrics
    private let lastSubscriptionID = Atomic<UInt64>(0)

    init(metrics: NATSClientMetrics) { self.metrics = metrics }

    func nextSubscriptionID() -> NATSSubscriptionID {
        NATSSubscriptionID(lastSubscriptionID.add(1, ordering: .relaxed).newValue)
    }
}
