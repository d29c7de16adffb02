import Foundation
import ParleyObservability

/// Delivers the outbox, at least once and in order per key: leases the oldest pending event of each key that is
/// due, POSTs it, and records the outcome. A 2xx answer delivers it; anything else (an error status, a timeout, a
/// refused connection) puts it back with exponential backoff, until `maxAttempts`: then it is dead and the key's
/// next event may go. A crash leaves the event leased until its lease ends; then any instance delivers it again
/// (hence "at least once": the idempotency key tells the backend it is the same event).
final class WebhookWorker: Sendable {
    let configuration: WebhookConfiguration
    let jobs: WebhookJobRepository
    let settings: WebhookSettingsCache
    let caller: WebhookCaller
    let metrics: WebhookMetrics
    let logger: Logger

    init(
        configuration: WebhookConfiguration, jobs: WebhookJobRepository, settings: WebhookSettingsCache,
        caller: WebhookCaller, metrics: WebhookMetrics, logger: Logger
    ) {
        self.configuration = configuration
        self.jobs = jobs
        self.settings = settings
        self.caller = caller
        self.metrics = metrics
        self.logger = logger
    }

    /// One lease and its deliveries; returns how many events were delivered or dropped (progress: the keys' next
    /// events may be due at once, so the caller passes again).
    @discardableResult
    func runPass() async -> Int {
        let leased: [WebhookJobRepository.Job]
        do {
            leased = try await jobs.lease(limit: configuration.batchSize, leaseSeconds: configuration.leaseSeconds)
        } catch {
            logger.warning("leasing webhook events failed", ["error": .string(String(describing: error))])
            return 0
        }
        guard !leased.isEmpty else { return 0 }
        return await withTaskGroup(of: Bool.self) { group in
            var running = 0
            var progressed = 0
            for job in leased {
                if running >= configuration.concurrentDeliveries, let done = await group.next() {
                    running -= 1
                    if done { progressed += 1 }
                }
                group.addTask { [self] in await process(job) }
                running += 1
            }
            for await done in group where done { progressed += 1 }
            return progressed
        }
    }

    /// Delivers one event; true when it left the queue (delivered or dropped). Database errors leave it leased:
    /// it comes back when the lease ends.
    func process(_ job: WebhookJobRepository.Job) async -> Bool {
        do {
            return try await deliver(job)
        } catch {
            logger.warning(
                "webhook event failed; retried after its lease",
                ["job_id": .int(Int(job.id)), "error": .string(String(describing: error))])
            return false
        }
    }

    private func deliver(_ job: WebhookJobRepository.Job) async throws -> Bool {
        guard let current = settings.settings(appId: job.appId), let event = WebhookEvent(rawValue: job.event),
            current.wants(event), let appKey = caller.appKey(of: job.appId)
        else {
            // The webhook was removed, disabled or no longer wants this event after it was queued.
            try await jobs.drop(jobId: job.id)
            return true
        }
        let eventId = "evt_\(job.id)"
        let body = WebhookCaller.envelope(
            eventId: eventId, event: job.event, appKey: appKey, createdAt: job.createdAt, attempt: job.attempts,
            data: job.payload)
        let status: Int?
        let reason: String
        switch await caller.call(current, event: job.event, eventId: eventId, body: body) {
        case .success(let response) where (200...299).contains(response.status):
            try await jobs.delivered(jobId: job.id, status: response.status)
            metrics.delivered.labels(job.event).increment()
            return true
        case .success(let response):
            status = response.status
            reason = "HTTP \(response.status)"
        case .failure(let failure):
            status = nil
            reason = failure.description
        }
        let dead = job.attempts >= configuration.maxAttempts
        let delay = configuration.backoff(afterAttempts: job.attempts)
        try await jobs.failed(jobId: job.id, status: status, error: reason, retryAfter: delay, dead: dead)
        if dead {
            metrics.dead.labels(job.event).increment()
            logger.warning(
                "webhook event dead",
                [
                    "app_id": .int(Int(job.appId)), "job_id": .int(Int(job.id)), "event": .string(job.event),
                    "attempts": .int(job.attempts), "reason": .string(reason),
                ])
            return true
        }
        metrics.failed.labels(job.event).increment()
        logger.info(
            "webhook event will retry",
            [
                "job_id": .int(Int(job.id)), "attempts": .int(job.attempts),
                "delay_ms": .int(Int(delay.components.seconds * 1000)), "reason": .string(reason),
            ])
        return false
    }

    /// Refreshes the backlog gauges.
    func measureBacklog() async {
        do {
            let backlog = try await jobs.backlog()
            metrics.pending.set(backlog.pending)
            metrics.oldestPendingSeconds.set(Int(backlog.oldestSeconds))
        } catch {
            logger.warning("measuring the webhook backlog failed", ["error": .string(String(describing: error))])
        }
    }
}
