import ParleyCrypto
import ParleyJSON
import ParleyNATS
import ParleyNet
import ParleyObservability
import Synchronization

/// The relay over NATS (`PARLEY_RELAY=nats://...`), routed by interest (see `ClusterRelay` and `RelaySubjects`):
///
/// - A messaging event goes, from the instance that stored it, to the subject of each recipient user, as the frame
///   that instance encoded (`UserDeliveryPayload`). An instance subscribes to the users it holds sockets for, so
///   the event reaches only instances with a recipient, and no instance loads it from the database.
/// - A chat-room message goes to the room's subject, which instances with a connection inside subscribe to.
/// - Presence, room dismissals and member-cache invalidations go to every instance (`PREFIX.all`).
///
/// The client does not echo this instance's own publishes: it delivers its own events itself. After an outage
/// that may have lost events, `lostFeed` makes this instance's clients sync, as with LISTEN/NOTIFY.
final class NATSRelay: ClusterRelay {
    let instanceId: String
    var routesByRecipient: Bool { true }

    private let configuration: NATSConfiguration
    private let subjects: RelaySubjects
    private let loop: EventLoop
    private let logger: Logger
    private let metrics: MetricsRegistry
    private let client = Mutex<NATSClientHandle?>(nil)
    /// What `start` was given.
    private let sinks = Mutex<RelaySinks?>(nil)
    private let kindHandlers = Mutex<[String: @Sendable (JSONObject) async -> Void]>([:])
    /// Subscribed subjects, counted: users whose keys collide (and any subject asked for twice) share one
    /// subscription, so nothing arrives twice.
    private let interest = Mutex<[String: Interest]>([:])
    /// How long a new user subscription may wait for the server's confirmation before the connections waiting on it
    /// are let go anyway.
    private let confirmTimeout: Duration
    /// Broadcast and room descriptors, read in order by `run` (their handlers are async).
    private let descriptors: AsyncStream<[UInt8]>
    private let descriptorInput: AsyncStream<[UInt8]>.Continuation
    private let firstConnection = Mutex<(connected: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    private let received: Counter
    private let undecodable: Counter

    /// One subscribed subject.
    private struct Interest {
        var sid: NATSSubscriptionID
        var count: Int
        /// The server has confirmed the SUB (the PONG of a PING written after it), or the wait for it ended.
        var confirmed: Bool
        /// `whenReceiving` callers waiting for that.
        var waiters: [@Sendable () -> Void] = []
    }

    /// `confirmTimeout`: the bound on the wait for a new user subscription's confirmation (default: the client's
    /// connect timeout, which bounds the same round trip at connection time).
    init(
        configuration: NATSConfiguration, subjects: RelaySubjects, loop: EventLoop, logger: Logger,
        metrics: MetricsRegistry, confirmTimeout: Duration? = nil
    ) {
        instanceId = SecureRandom.token(bytes: 9)
        self.confirmTimeout = confirmTimeout ?? configuration.connectTimeout
        var configuration = configuration
        // This instance delivers its own events itself.
        configuration.echo = false
        self.configuration = configuration
        self.subjects = subjects
        self.loop = loop
        self.logger = logger
        self.metrics = metrics
        (descriptors, descriptorInput) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
        received = metrics.counter(
            "parley_realtime_cluster_events_received_total",
            help: "Events received from other instances."
        ).labels()
        undecodable = metrics.counter(
            "parley_realtime_cluster_undecodable_total",
            help: "Relay messages from other instances that could not be read (dropped)."
        ).labels()
    }

    // MARK: Outgoing

    func publish(serialized descriptor: [UInt8]) {
        publish(descriptor, subject: subjects.all)
    }

    func publish(serialized descriptor: [UInt8], toRoom key: RoomKey) {
        publish(descriptor, subject: subjects.room(key))
    }

    private func publish(_ descriptor: [UInt8], subject: String) {
        guard let client = client.withLock({ $0 }) else { return }
        // The envelope LISTEN/NOTIFY uses, so both relays read descriptors the same way.
        let payload = PostgresRelay.payloads(instanceId: instanceId, descriptors: [descriptor])
        client.perform { client in
            for part in payload { client.publish(subject: subject, payload: Array(part.utf8)) }
        }
    }

    func route(_ delivery: Delivery, frame: [UInt8], to userIds: [String]) {
        guard !userIds.isEmpty, let client = client.withLock({ $0 }) else { return }
        let header = UserDeliveryPayload.Header(
            appId: delivery.appId, conversationId: delivery.conversationId,
            origin: delivery.origin, excludedUserId: delivery.excludedUserId,
            touchesSummary: delivery.touchesSummary)
        let subjects = subjects
        let appId = delivery.appId
        // One hop to the client's loop for all recipients.
        client.perform { client in
            for userId in userIds {
                client.publish(
                    subject: subjects.user(appId: appId, userId: userId),
                    payload: header.payload(userId: userId, frame: frame))
            }
        }
    }

    func onDescriptors(ofKind kind: String, _ handler: @escaping @Sendable (JSONObject) async -> Void) {
        kindHandlers.withLock { $0[kind] = handler }
    }

    // MARK: Interest

    func userInterest(appId: Int64, userId: String, present: Bool) {
        changeInterest(subjects.user(appId: appId, userId: userId), present: present, routed: true)
    }

    func roomInterest(_ key: RoomKey, present: Bool) {
        changeInterest(subjects.room(key), present: present, routed: false)
    }

    /// Subscribes on the first interest in `subject` and unsubscribes after the last, in the order the calls
    /// come (each caller calls under its own lock, so a subject's changes come in order). A new user subscription
    /// is confirmed with a flush: until its PONG, events published for the user may reach NATS before the SUB.
    private func changeInterest(_ subject: String, present: Bool, routed: Bool) {
        guard let client = client.withLock({ $0 }) else { return }
        let (toConfirm, released) = interest.withLock {
            interest -> (NATSSubscriptionID?, [@Sendable () -> Void]) in
            if present {
                if var existing = interest[subject] {
                    existing.count += 1
                    interest[subject] = existing
                    return (nil, [])
                }
                do {
                    let sid = try client.subscribe(subject: subject) { [self] message in
                        if routed { receivedRouted(message) } else { descriptorInput.yield(message.payload) }
                    }
                    // Nobody waits for the broadcast and room subjects.
                    interest[subject] = Interest(sid: sid, count: 1, confirmed: !routed)
                    return (routed ? sid : nil, [])
                } catch {
                    logger.warning(
                        "could not subscribe to a relay subject",
                        ["subject": .string(subject), "error": .string(String(describing: error))])
                    return (nil, [])
                }
            } else {
                guard var existing = interest[subject] else { return (nil, []) }
                if existing.count > 1 {
                    existing.count -= 1
                    interest[subject] = existing
                    return (nil, [])
                }
                interest[subject] = nil
                client.unsubscribe(existing.sid)
                // Their connections have closed; let them go rather than keep them until a confirmation.
                return (nil, existing.waiters)
            }
        }
        for waiter in released { waiter() }
        if let sid = toConfirm { confirm(subject, sid: sid, client: client) }
    }

    /// Flushes after the SUB of `sid` (the flush's PING goes out after it, on the client's loop) and marks the
    /// subject confirmed at the PONG, or when the flush fails or times out.
    private func confirm(_ subject: String, sid: NATSSubscriptionID, client: NATSClientHandle) {
        let timeout = confirmTimeout
        client.perform { [self] nats in
            let wait = ConfirmationWait()
            let timer = nats.loop.scheduleTimer(after: timeout) { [self] in
                guard wait.end() else { return }
                logger.warning(
                    "NATS did not confirm a relay subscription in time; its connections are answered anyway",
                    ["subject": .string(subject), "timeout": .string("\(timeout)")])
                confirmed(subject, sid: sid)
            }
            nats.flush { [self] _ in
                // Unconfirmed when there is no confirmed connection: the SUB goes out with the reconnection, and a
                // reconnection that may have lost events makes every client here sync again.
                guard wait.end() else { return }
                nats.loop.cancelTimer(timer)
                confirmed(subject, sid: sid)
            }
        }
    }

    private func confirmed(_ subject: String, sid: NATSSubscriptionID) {
        let waiters = interest.withLock { interest -> [@Sendable () -> Void] in
            guard var entry = interest[subject], entry.sid == sid else { return [] }
            let waiters = entry.waiters
            entry.confirmed = true
            entry.waiters = []
            interest[subject] = entry
            return waiters
        }
        for waiter in waiters { waiter() }
    }

    func whenReceiving(appId: Int64, userId: String, _ ready: @escaping @Sendable () -> Void) {
        let subject = subjects.user(appId: appId, userId: userId)
        let waiting = interest.withLock { interest -> Bool in
            // No entry: no client (not started) or the SUB failed; nothing to wait for either way.
            guard var entry = interest[subject], !entry.confirmed else { return false }
            entry.waiters.append(ready)
            interest[subject] = entry
            return true
        }
        if !waiting { ready() }
    }

    // MARK: Incoming

    private func receivedRouted(_ message: NATSMessage) {
        guard let payload = UserDeliveryPayload(decoding: message.payload) else {
            undecodable.increment()
            return
        }
        received.increment()
        sinks.withLock { $0 }?.deliverRouted(payload)
    }

    func start(timeout: Duration, sinks: RelaySinks) async -> Bool {
        self.sinks.withLock { $0 = sinks }
        let handle = NATSClientHandle.start(
            configuration: configuration, loop: loop, logger: logger, metrics: metrics
        ) { [self] event in clientEvent(event) }
        client.withLock { $0 = handle }
        changeInterest(subjects.all, present: true, routed: false)
        return await waitForFirstConnection(timeout: timeout)
    }

    private func clientEvent(_ event: NATSClientEvent) {
        switch event {
        case .connected(let server):
            logger.info("relay connected to NATS", ["server": .string(server)])
            let waiters = firstConnection.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.connected = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        case .disconnected(let error):
            logger.warning(
                "relay lost its NATS connection; reconnecting (other instances' events wait)",
                ["error": .string(String(describing: error))])
        case .reconnected(let server, let possiblyLostMessages):
            logger.info(
                "relay reconnected to NATS",
                ["server": .string(server), "possibly_lost": .bool(possiblyLostMessages)])
            if possiblyLostMessages { sinks.withLock { $0 }?.lostFeed() }
        case .lost(let reason):
            logger.warning(
                "relay dropped events for other instances; their clients catch up through sync",
                ["reason": .string(String(describing: reason))])
        case .serverError(let error):
            logger.warning("NATS refused a relay operation", ["error": .string(String(describing: error))])
        case .attemptFailed:
            break // the client logs its failed attempts itself
        case .closed(let error):
            if let error { logger.error("relay's NATS client stopped", ["error": .string(String(describing: error))]) }
        }
    }

    private func waitForFirstConnection(timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { [self] in
                await withCheckedContinuation { continuation in
                    let connected = firstConnection.withLock { state -> Bool in
                        if !state.connected { state.waiters.append(continuation) }
                        return state.connected
                    }
                    if connected { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            if !first {
                // Nobody is left to resume the waiter later: resume it now, so the group can end.
                let waiters = firstConnection.withLock { state -> [CheckedContinuation<Void, Never>] in
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
            }
            group.cancelAll()
            return first
        }
    }

    func run() async {
        await withTaskCancellationHandler {
            for await payload in descriptors {
                await handle(payload)
            }
        } onCancel: {
            descriptorInput.finish()
        }
        if let client = client.withLock({ $0 }) { await client.close() }
    }

    private func handle(_ payload: [UInt8]) async {
        guard case .object(let envelope)? = try? JSONValue.parse(payload),
            case .string(let sender)? = envelope["i"], case .array(let list)? = envelope["e"]
        else {
            undecodable.increment()
            return
        }
        // Without echo this never happens; kept so a misconfigured server cannot loop an instance's own events.
        guard sender != instanceId else { return }
        let handlers = kindHandlers.withLock { $0 }
        for case .object(let descriptor) in list {
            received.increment()
            if let kind = descriptor["k"]?.stringValue, let handler = handlers[kind] { await handler(descriptor) }
        }
    }
}

/// Which of a confirmation's two endings (PONG or timeout) came first. Touched on the client's loop only.
private final class ConfirmationWait: @unchecked Sendable {
    private var ended = false

    /// True the first time.
    func end() -> Bool {
        defer { ended = true }
        return !ended
    }
}
