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
    private let interest = Mutex<[String: (sid: NATSSubscriptionID, count: Int)]>([:])
    /// Broadcast and room descriptors, read in order by `run` (their handlers are async).
    private let descriptors: AsyncStream<[UInt8]>
    private let descriptorInput: AsyncStream<[UInt8]>.Continuation
    private let firstConnection = Mutex<(connected: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    private let received: Counter
    private let undecodable: Counter

    init(
        configuration: NATSConfiguration, subjects: RelaySubjects, loop: EventLoop, logger: Logger,
        metrics: MetricsRegistry
    ) {
        instanceId = SecureRandom.token(bytes: 9)
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
            originSessionId: delivery.originSessionId, excludedUserId: delivery.excludedUserId,
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
    /// come (each caller calls under its own lock, so a subject's changes come in order).
    private func changeInterest(_ subject: String, present: Bool, routed: Bool) {
        guard let client = client.withLock({ $0 }) else { return }
        interest.withLock { interest in
            if present {
                if let existing = interest[subject] {
                    interest[subject] = (existing.sid, existing.count + 1)
                    return
                }
                do {
                    let sid = try client.subscribe(subject: subject) { [self] message in
                        if routed { receivedRouted(message) } else { descriptorInput.yield(message.payload) }
                    }
                    interest[subject] = (sid, 1)
                } catch {
                    logger.warning(
                        "could not subscribe to a relay subject",
                        ["subject": .string(subject), "error": .string(String(describing: error))])
                }
            } else {
                guard let existing = interest[subject] else { return }
                if existing.count > 1 {
                    interest[subject] = (existing.sid, existing.count - 1)
                } else {
                    interest[subject] = nil
                    client.unsubscribe(existing.sid)
                }
            }
        }
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
