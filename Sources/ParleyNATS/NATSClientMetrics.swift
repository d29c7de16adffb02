import ParleyObservability

/// The client's counters: atomics, so any thread may read them. With a registry they are its series (shared by
/// every client given the same registry); without one, the client's own.
public final class NATSClientMetrics: Sendable {
    /// Publishes accepted: written, or held while disconnected.
    public let published: Counter
    /// Messages received (MSG and HMSG).
    public let received: Counter
    /// Publishes dropped: flow control, a full pending buffer, or a close with publishes still pending.
    public let dropped: Counter
    /// Connections confirmed after a loss.
    public let reconnects: Counter

    public init(registry: MetricsRegistry? = nil) {
        guard let registry else {
            published = Counter()
            received = Counter()
            dropped = Counter()
            reconnects = Counter()
            return
        }
        published = registry.counter(
            "parley_nats_published_total", help: "NATS publishes accepted (written or held while disconnected)"
        ).labels()
        received = registry.counter("parley_nats_received_total", help: "NATS messages received").labels()
        dropped = registry.counter(
            "parley_nats_dropped_total", help: "NATS publishes dropped (flow control, full pending buffer, close)"
        ).labels()
        reconnects = registry.counter("parley_nats_reconnects_total", help: "NATS connections restored after a loss")
            .labels()
    }
}

/// A snapshot of a client's counters.
public struct NATSClientStatistics: Sendable, Hashable {
    public var published: Int
    public var received: Int
    public var dropped: Int
    public var reconnects: Int

    init(_ metrics: NATSClientMetrics) {
        published = metrics.published.current
        received = metrics.received.current
        dropped = metrics.dropped.current
        reconnects = metrics.reconnects.current
    }
}
