import ParleyObservability

/// The webhooks' series on `/metrics`.
struct WebhookMetrics: Sendable {
    let delivered: CounterFamily
    let failed: CounterFamily
    let dead: CounterFamily
    let pending: Gauge
    let oldestPendingSeconds: Gauge
    let beforeSendSeconds: HistogramFamily
    let beforeSendOutcomes: CounterFamily

    init(registry: MetricsRegistry) {
        delivered = registry.counter(
            "parley_webhook_delivered_total", help: "Webhook events delivered (a 2xx answer).", labels: ["event"])
        failed = registry.counter(
            "parley_webhook_failed_attempts_total", help: "Webhook delivery attempts that failed (retried later).",
            labels: ["event"])
        dead = registry.counter(
            "parley_webhook_dead_total", help: "Webhook events given up after PARLEY_WEBHOOK_MAX_ATTEMPTS.",
            labels: ["event"])
        pending = registry.gauge("parley_webhook_pending", help: "Webhook events waiting for delivery.").labels()
        oldestPendingSeconds = registry.gauge(
            "parley_webhook_oldest_pending_seconds", help: "Age of the oldest webhook event waiting for delivery."
        ).labels()
        beforeSendSeconds = registry.histogram(
            "parley_webhook_before_send_seconds", help: "Time the send path waited for before_send.",
            labels: ["outcome"])
        beforeSendOutcomes = registry.counter(
            "parley_webhook_before_send_total",
            help: "before_send calls by outcome (allow, replace, deny, failed_allow, failed_deny).",
            labels: ["outcome"])
    }
}
