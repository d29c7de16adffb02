import Foundation
import ParleyObservability

/// Delivers the outbox, at least once and in order per key: leases keys whose oldest pending event is due, with
/// the events after it, POSTs them one after another, and records each outcome. A 2xx answer delivers it; anything else (an error status, a timeout, a
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

    /// One lease and its deliveries; returns how many events left the queue (delivered, dead or dropped): progress,
    /// so the caller passes again at once.
    @discardableResult
    func runPass() async -> Int {
        let leased: [WebhookJobRepository.Job]
        do {
            leased = try await jobs.lease(
                keys: configuration.keysPerLease, perKey: configuration.eventsPerKey,
                leaseSeconds: configuration.leaseSeconds)
        } catch {
            logger.warning("leasing webhook events failed", ["error": .string(String(describing: error))])
            return 0
        }
        guard !leased.isEmpty else { return 0 }
        var runs: [String: [WebhookJobRepository.Job]] = [:]
        var order: [String] = []
        for job in leased {
            let key = "\(job.appId):\(job.key)"
            if runs[key] == nil { order.append(key) }
            runs[key, default: []].append(job)
        }
        return await withTaskGroup(of: Int.self) { group in
            var running = 0
            var progressed = 0
            for key in order {
                if running >= configuration.concurrentDeliveries, let done = await group.next() {
                    running -= 1
                    progressed += done
                }
                let run = runs[key] ?? []
                group.addTask { [self] in await process(run) }
                running += 1
            }
            for await done in group { progressed += done }
            return progressed
        }
    }

    /// Delivers one key's leased events in order, stopping at the first that is not done (it waits for its retry,
    /// the rest are given back). Returns how many left the queue. A database error leaves the rest leased: they
    /// come back when the lease ends.
    func process(_ run: [WebhookJobRepository.Job]) async -> Int {
        var done = 0
        let started = ContinuousClock.now
        // A call takes at most the app's timeout (10 s at most): starting none past half the lease ends the run well
        // inside it, so no other worker can take the key while one of its events is still in flight here.
        let deadline = started + .seconds(configuration.leaseSeconds) / 2
        for (index, job) in run.enumerated() {
            do {
                if index > 0 && ContinuousClock.now > deadline {
                    try await jobs.release(jobIds: run[index...].map(\.id))
                    return done
                }
                guard try await deliver(job) else {
                    try await jobs.release(jobIds: run[(index + 1)...].map(\.id))
                    return done
                }
                done += 1
            } catch {
                logger.warning(
                    "webhook event failed; retried after its lease",
                    ["job_id": .int(Int(job.id)), "error": .string(String(describing: error))])
                return done
            }
        }
        return done
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
        let attempt = job.attempts + 1
        let body = WebhookCaller.envelope(
            eventId: eventId, event: job.event, appKey: appKey, createdAt: job.createdAt, attempt: attempt,
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
        let dead = attempt >= configuration.maxAttempts
        let delay = configuration.backoff(afterAttempts: attempt)
        try await jobs.failed(jobId: job.id, status: status, error: reason, retryAfter: delay, dead: dead)
        if dead {
            metrics.dead.labels(job.event).increment()
            logger.warning(
                "webhook event dead",
                [
                    "app_id": .int(Int(job.appId)), "job_id": .int(Int(job.id)), "event": .string(job.event),
                    "attempts": .int(attempt), "reason": .string(reason),
                ])
            return true
        }
        metrics.failed.labels(job.event).increment()
        logger.info(
            "webhook event will retry",
            [
                "job_id": .int(Int(job.id)), "attempts": .int(attempt),
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
