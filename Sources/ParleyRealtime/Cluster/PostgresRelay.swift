import ParleyCrypto
import ParleyJSON
import ParleyMessaging
import ParleyObservability
import ParleyPostgres
import Synchronization

/// Carries events between the instances of a deployment over PostgreSQL LISTEN/NOTIFY, so that one database is
/// the only moving part. Outgoing descriptors are batched: while one NOTIFY is in flight the next ones gather,
/// and each batch goes out as one statement (one commit, one notify-queue lock) however many events it holds.
/// Incoming notifications from other instances are resolved (messages loaded by id, one query per
/// notification) and handed to the local fan-out; an instance ignores its own.
final class PostgresRelay: ClusterRelay {
    /// Stay well under PostgreSQL's 8,000-byte payload limit.
    static let maxPayloadBytes = 7000
    /// At most one NOTIFY per this interval: each is a transaction that takes a cluster-wide lock at commit and
    /// wakes every listener, so under load events wait up to this long to share one.
    static let minimumInterval: Duration = .milliseconds(3)

    let instanceId: String
    private let database: PostgresClient
    private let channel: String
    private let messages: MessageService
    private let logger: Logger
    private let notifies: Counter
    private let received: Counter

    private struct Outbox {
        /// Serialized descriptors (JSON objects), in publish order.
        var descriptors: [[UInt8]] = []
        var flushing = false
    }

    private let outbox = Mutex(Outbox())
    /// Descriptor kinds another part of the gateway reads itself (chat rooms' "R...", presence's "p"), instead of
    /// fan-out deliveries.
    private let kindHandlers = Mutex<[String: @Sendable (JSONObject) async -> Void]>([:])

    /// How this instance's own payloads begin (see `payloads`).
    private let ownPrefix: String
    private struct Feed: Sendable {
        var stream: AsyncStream<PostgresNotificationEvent>
        var sinks: RelaySinks
    }

    /// Subscribed in `start`, read in `run`.
    private let feed = Mutex<Feed?>(nil)

    var routesByRecipient: Bool { false }

    init(database: PostgresClient, channel: String, messages: MessageService, logger: Logger, metrics: MetricsRegistry)
    {
        instanceId = SecureRandom.token(bytes: 9)
        ownPrefix = #"{"i":"# + JSONValue.string(instanceId).serializedString + ","
        self.database = database
        self.channel = channel
        self.messages = messages
        self.logger = logger
        notifies = metrics.counter(
            "parley_realtime_cluster_notifies_total",
            help: "NOTIFY statements sent to other instances (each carries a batch of events)."
        )
        .labels()
        received = metrics.counter(
            "parley_realtime_cluster_events_received_total",
            help: "Events received from other instances."
        ).labels()
    }

    // MARK: Outgoing

    /// Every instance hears every room's events.
    func publish(serialized descriptor: [UInt8], toRoom key: RoomKey) {
        publish(serialized: descriptor)
    }

    /// Not routed: every instance resolves the descriptor `publish` sent.
    func route(_ delivery: Delivery, frame: [UInt8], to userIds: [String]) {}
    func userInterest(appId: Int64, userId: String, present: Bool) {}
    func roomInterest(_ key: RoomKey, present: Bool) {}

    /// Every instance hears every event on the one LISTEN connection: nothing to wait for.
    func whenReceiving(appId: Int64, userId: String, _ ready: @escaping @Sendable () -> Void) { ready() }

    /// A descriptor already serialized (`RelayDescriptor.describeSerialized`: every stored message passes here).
    func publish(serialized descriptor: [UInt8]) {
        let startFlush = outbox.withLock { box -> Bool in
            box.descriptors.append(descriptor)
            if box.flushing { return false }
            box.flushing = true
            return true
        }
        if startFlush { Task { await self.flush() } }
    }

    private func flush() async {
        while true {
            let batch = outbox.withLock { box -> [[UInt8]] in
                let taken = box.descriptors
                box.descriptors.removeAll(keepingCapacity: true)
                if taken.isEmpty { box.flushing = false }
                return taken
            }
            guard !batch.isEmpty else { return }
            let payloads = Self.payloads(instanceId: instanceId, descriptors: batch)
            do {
                try await send(payloads)
                notifies.increment()
                try? await Task.sleep(for: Self.minimumInterval)
            } catch {
                // Other instances' clients catch up through sync when they reconnect; this is rare (DB down).
                logger.warning(
                    "cluster NOTIFY failed; other instances miss these events until their clients sync",
                    ["events": .int(batch.count), "error": .string(String(describing: error))])
            }
        }
    }

    /// `{"i": INSTANCE, "e": [descriptor, ...]}` chunks under the payload limit.
    static func payloads(instanceId: String, descriptors: [[UInt8]]) -> [String] {
        let prefix = Array(#"{"i":"#.utf8) + JSONValue.string(instanceId).serialized() + Array(#","e":["#.utf8)
        var payloads: [String] = []
        var current = prefix
        var count = 0
        for bytes in descriptors {
            if count > 0 && current.count + bytes.count + 3 > maxPayloadBytes {
                current.append(contentsOf: "]}".utf8)
                payloads.append(String(decoding: current, as: UTF8.self))
                current = prefix
                count = 0
            }
            if count > 0 { current.append(UInt8(ascii: ",")) }
            current.append(contentsOf: bytes)
            count += 1
        }
        if count > 0 {
            current.append(contentsOf: "]}".utf8)
            payloads.append(String(decoding: current, as: UTF8.self))
        }
        return payloads
    }

    private func send(_ payloads: [String]) async throws {
        // One statement: one transaction takes the notify lock once for the whole batch.
        var query = PostgresQuery(unsafeSQL: "SELECT ")
        for (index, payload) in payloads.enumerated() {
            if index > 0 { query.sql += ", " }
            query.binds.append(.text(channel))
            query.binds.append(.text(payload))
            query.sql += "pg_notify($\(query.binds.count - 1)::text, $\(query.binds.count)::text)"
        }
        _ = try await database.query(query)
    }

    // MARK: Incoming

    /// Hands other instances' descriptors of `kind` to `handler` (on the feed's task, in order) instead of resolving
    /// them into deliveries.
    func onDescriptors(ofKind kind: String, _ handler: @escaping @Sendable (JSONObject) async -> Void) {
        kindHandlers.withLock { $0[kind] = handler }
    }

    /// Subscribes to the other instances' events and returns once PostgreSQL LISTENs for this instance (at most
    /// `timeout`): an instance that serves before its feed is up would miss, live, the events published meanwhile.
    func start(timeout: Duration, sinks: RelaySinks) async -> Bool {
        let stream = database.listen(channel)
        feed.withLock { $0 = Feed(stream: stream, sinks: sinks) }
        return await database.waitUntilListening(channel, timeout: timeout)
    }

    /// Reads the feed (from `start`) until cancelled.
    func run() async {
        guard let feed = feed.withLock({ $0 }) else { return }
        for await event in feed.stream {
            switch event {
            case .reconnected:
                feed.sinks.lostFeed()
            case .notification(_, let payload):
                await handle(payload, deliver: feed.sinks.deliver)
            }
        }
    }

    private func handle(_ payload: String, deliver: @Sendable (Delivery) async -> Void) async {
        // Every instance hears its own notifications too: skip them before parsing.
        if payload.hasPrefix(ownPrefix) { return }
        guard case .object(let envelope)? = try? JSONValue.parse(payload),
            case .string(let sender)? = envelope["i"], sender != instanceId,
            case .array(let descriptors)? = envelope["e"]
        else { return }
        let objects = descriptors.compactMap(\.objectValue)
        received.increment(by: objects.count)
        let ids = objects.compactMap { object -> Int64? in
            guard let kind = object["k"]?.stringValue, ["m", "e", "v"].contains(kind) else { return nil }
            return object["id"]?.stringValue.flatMap { Int64($0) }
        }
        var loaded: [String: IMMessage] = [:]
        if !ids.isEmpty {
            do {
                for message in try await messages.loadForDelivery(ids: ids) { loaded[message.id] = message }
            } catch {
                logger.warning("could not load relayed messages", ["error": .string(String(describing: error))])
            }
        }
        let handlers = kindHandlers.withLock { $0 }
        for object in objects {
            if let kind = object["k"]?.stringValue, let handler = handlers[kind] {
                await handler(object)
                continue
            }
            if let delivery = RelayDescriptor.delivery(object, messages: loaded) { await deliver(delivery) }
        }
    }
}
