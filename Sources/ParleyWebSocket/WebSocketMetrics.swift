import ParleyObservability

/// Prometheus series for WebSocket sessions. Create once per registry and share across routes.
public final class WebSocketMetrics: Sendable {
    let openSessions: Gauge
    let messagesReceived: Counter
    let messagesSent: Counter
    let closes: CounterFamily

    public init(registry: MetricsRegistry) {
        openSessions = registry.gauge("parley_websocket_open_sessions", help: "Open WebSocket sessions.").labels()
        messagesReceived = registry.counter(
            "parley_websocket_messages_received_total",
            help: "Complete WebSocket messages received."
        ).labels()
        messagesSent = registry.counter(
            "parley_websocket_messages_sent_total",
            help: "WebSocket data messages accepted for sending."
        ).labels()
        closes = registry.counter(
            "parley_websocket_closes_total",
            help: "Ended WebSocket sessions by close code (peer's, else ours, else 1006).",
            labels: ["code"])
    }
}
