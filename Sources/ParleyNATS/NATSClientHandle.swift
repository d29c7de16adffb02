import ParleyNet
import ParleyObservability

/// A client as other threads see it (as `WebSocketSessionHandle` is for a session): every call hops to the
/// client's loop, or runs at once when already there. Subjects are checked at the call, so a bad one throws
/// to the caller instead of vanishing on the loop.
public struct NATSClientHandle: @unchecked Sendable, Hashable {
    // Only dereferenced on `loop` (enforced by `perform`), except `shared`, which is Sendable.
    let client: NATSClient
    public let loop: EventLoop

    init(client: NATSClient) {
        self.client = client
        loop = client.loop
    }

    /// Makes a client on `loop` and starts it. `onEvent` and message handlers run on `loop`.
    public static func start(
        configuration: NATSConfiguration, loop: EventLoop, logger: Logger, metrics: MetricsRegistry? = nil,
        onEvent: @escaping @Sendable (NATSClientEvent) -> Void = { _ in }
    ) -> NATSClientHandle {
        let handle = NATSClient(
            configuration: configuration, loop: loop, logger: logger, metrics: metrics, onEvent: onEvent
        ).handle
        handle.perform { $0.start() }
        return handle
    }

    /// Runs `body` with the client on its loop.
    public func perform(_ body: @escaping @Sendable (NATSClient) -> Void) {
        if loop.inEventLoop {
            body(client)
        } else {
            let handle = self
            loop.execute { body(handle.client) }
        }
    }

    public var statistics: NATSClientStatistics { NATSClientStatistics(client.shared.metrics) }

    /// Publishes on the loop. What became of it shows in the counters, and a drop as a `.lost` event.
    public func publish(subject: String, replyTo: String? = nil, payload: [UInt8]) throws(NATSError) {
        try NATSSubject.validatePublish(subject)
        if let replyTo { try NATSSubject.validatePublish(replyTo) }
        perform { $0.publish(subject: subject, replyTo: replyTo, payload: payload) }
    }

    /// Subscribes (see `NATSClient.subscribe`); the id is known at once, the SUB goes out from the loop.
    @discardableResult
    public func subscribe(
        subject: String, queue: String? = nil, handler: @escaping @Sendable (NATSMessage) -> Void
    ) throws(NATSError) -> NATSSubscriptionID {
        try NATSClient.validateSubscription(subject: subject, queue: queue)
        let sid = client.shared.nextSubscriptionID()
        perform { client in try? client.register(sid, subject: subject, queue: queue, handler: handler) }
        return sid
    }

    public func unsubscribe(_ sid: NATSSubscriptionID, after max: Int? = nil) {
        perform { $0.unsubscribe(sid, after: max) }
    }

    /// True once the server has read everything this client wrote before the call (a PING answered).
    public func flush() async -> Bool {
        await withUnsafeContinuation { continuation in
            perform { $0.flush { continuation.resume(returning: $0) } }
        }
    }

    /// Drains, closes, and returns once the client is closed.
    public func close() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            perform { $0.close { continuation.resume() } }
        }
    }

    /// Runs `body` on the loop and returns its result.
    public func withClient<T: Sendable>(_ body: @escaping @Sendable (NATSClient) -> T) async -> T {
        await withUnsafeContinuation { continuation in
            perform { continuation.resume(returning: body($0)) }
        }
    }

    public static func == (lhs: NATSClientHandle, rhs: NATSClientHandle) -> Bool { lhs.client === rhs.client }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(client)) }
}
