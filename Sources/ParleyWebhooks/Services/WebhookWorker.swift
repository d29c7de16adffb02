import Foundation
import ParleyObservability

/// Delivers the outbox, at least once and in order per key: leases keys whose oldest pending event is due, with
/// the events after it, POSTs them one after another (alone, or several per call when the app chose a batch size),
/// and records each outcome. A 2xx answer delivers them; anything else (an error status, a timeout, a
/// refused connection) puts them back with exponential backoff, until `maxAttempts`: then it is dead and the key's
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
    /// so the caller passes again at once. An app with a batch size of 1 gets a call per event, one key's events
    /// after another and up to `concurrentDeliveries` keys at once; an app with a larger one gets its leased events
    /// in calls of up to that many, one call after another (so each key's events still arrive in order).
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
        var batched: [Int64: [WebhookJobRepository.Job]] = [:]
        var batchedOrder: [Int64] = []
        for job in leased {
            if let current = settings.settings(appId: job.appId), current.batchSize > 1 {
                if batched[job.appId] == nil { batchedOrder.append(job.appId) }
                batched[job.appId, default: []].append(job)
                continue
            }
            let key = "\(job.appId):\(job.key)"
            if runs[key] == nil { order.append(key) }
            runs[key, default: []].append(job)
        }
        return await withTaskGroup(of: Int.self) { group in
            var running = 0
            var progressed = 0
            func add(_ work: @escaping @Sendable () async -> Int) async {
                if running >= configuration.concurrentDeliveries, let done = await group.next() {
                    running -= 1
                    progressed += done
                }
                group.addTask(operation: work)
                running += 1
            }
            for appId in batchedOrder {
                let events = batched[appId] ?? []
                await add { [self] in await processBatched(events, appId: appId) }
            }
            for key in order {
                let run = runs[key] ?? []
                await add { [self] in await process(run) }
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
        let deadline = runDeadline()
        for (index, job) in run.enumerated() {
            do {
                if index > 0 && ContinuousClock.now > deadline {
                    try await jobs.release(jobIds: run[index...].map(\.id))
                    return done
                }
                guard let (current, appKey) = try await callable([job]) else {
                    done += 1
                    continue
                }
                let outcome = try await attempt([job], settings: current, appKey: appKey)
                done += outcome.left
                if !outcome.delivered && outcome.left == 0 {
                    try await jobs.release(jobIds: run[(index + 1)...].map(\.id))
                    return done
                }
            } catch {
                logger.warning(
                    "webhook event failed; retried after its lease",
                    ["job_id": .int(Int(job.id)), "error": .string(String(describing: error))])
                return done
            }
        }
        return done
    }

    /// Delivers an app's leased events (in id order, so each key's in order) in calls of up to its batch size, one
    /// after another; a failed call stops the pass for the app (its events wait for their retry, the rest are given
    /// back, so no key's later event overtakes them). Returns how many left the queue.
    func processBatched(_ leased: [WebhookJobRepository.Job], appId: Int64) async -> Int {
        var done = 0
        let deadline = runDeadline()
        var remaining = leased[...]
        do {
            while !remaining.isEmpty {
                if done > 0 && ContinuousClock.now > deadline { break }
                let size = settings.settings(appId: appId)?.batchSize ?? 1
                let batch = Array(remaining.prefix(size))
                remaining = remaining.dropFirst(batch.count)
                guard let (current, appKey) = try await callable(batch) else {
                    done += batch.count
                    continue
                }
                let wanted = batch.filter { WebhookEvent(rawValue: $0.event).map(current.wants) ?? false }
                if wanted.count < batch.count {
                    try await jobs.drop(jobIds: batch.filter { !wanted.contains($0) }.map(\.id))
                    done += batch.count - wanted.count
                }
                guard !wanted.isEmpty else { continue }
                let outcome = try await attempt(wanted, settings: current, appKey: appKey)
                done += outcome.left
                if !outcome.delivered { break }
            }
            try await jobs.release(jobIds: remaining.map(\.id))
        } catch {
            logger.warning(
                "webhook events failed; retried after their lease",
                ["app_id": .int(Int(appId)), "error": .string(String(describing: error))])
        }
        return done
    }

    /// A call takes at most the app's timeout (10 s at most): starting none past half the lease ends a run well
    /// inside it, so no other worker can take a key while one of its events is still in flight here.
    private func runDeadline() -> ContinuousClock.Instant {
        ContinuousClock.now + .seconds(configuration.leaseSeconds) / 2
    }

    /// The app's settings and key when a call for `jobs` (all of one app) can be made; nil when its webhook was
    /// removed, disabled or no longer wants a lone event after it was queued: then the events are dropped unsent.
    private func callable(_ events: [WebhookJobRepository.Job]) async throws -> (WebhookSettings, String)? {
        guard let first = events.first else { return nil }
        if let current = settings.settings(appId: first.appId), current.enabled,
            let appKey = caller.appKey(of: first.appId),
            events.count > 1 || WebhookEvent(rawValue: first.event).map(current.wants) == true
        {
            return (current, appKey)
        }
        try await jobs.drop(jobIds: events.map(\.id))
        return nil
    }

    /// How one call ended: `delivered` (2xx), and how many of its events left the queue (all when delivered; those
    /// that went dead otherwise).
    struct Outcome {
        var delivered: Bool
        var left: Int
    }

    /// One call carrying `events` (one alone in its envelope with a batch size of 1, else `{"events": [...]}`), its
    /// outcome recorded.
    private func attempt(
        _ events: [WebhookJobRepository.Job], settings current: WebhookSettings, appKey: String
    ) async throws -> Outcome {
        let envelopes = events.map { job in
            WebhookCaller.envelope(
                eventId: "evt_\(job.id)", event: job.event, appKey: appKey, createdAt: job.createdAt,
                attempt: job.attempts + 1, data: job.payload)
        }
        let head = events[0]
        // The app's batch size decides the shape (not how many are ready), so its backend always gets the same one.
        let (event, callId, body) =
            current.batchSize == 1
            ? (head.event, "evt_\(head.id)", envelopes[0])
            : ("batch", "batch_\(head.id)_\(events[events.count - 1].id)", WebhookCaller.batch(envelopes))
        let status: Int?
        let reason: String
        switch await caller.call(current, event: event, eventId: callId, body: body) {
        case .success(let response) where (200...299).contains(response.status):
            try await jobs.delivered(jobIds: events.map(\.id), status: response.status)
            for job in events { metrics.delivered.labels(job.event).increment() }
            return Outcome(delivered: true, left: events.count)
        case .success(let response):
            status = response.status
            reason = "HTTP \(response.status)"
        case .failure(let failure):
            status = nil
            reason = failure.description
        }
        let attempt = head.attempts + 1
        let delay = configuration.backoff(afterAttempts: attempt)
        let dead = try await jobs.failed(
            jobIds: events.map(\.id), status: status, error: reason, retryAfter: delay,
            maxAttempts: configuration.maxAttempts)
        for job in dead {
            metrics.dead.labels(job.event).increment()
            logger.warning(
                "webhook event dead",
                [
                    "app_id": .int(Int(head.appId)), "job_id": .int(Int(job.id)), "event": .string(job.event),
                    "reason": .string(reason),
                ])
        }
        for job in events where !dead.contains(where: { $0.id == job.id }) {
            metrics.failed.labels(job.event).increment()
        }
        if dead.count < events.count {
            logger.info(
                "webhook call will retry",
                [
                    "job_id": .int(Int(head.id)), "events": .int(events.count), "attempts": .int(attempt),
                    "delay_ms": .int(Int(delay.components.seconds * 1000)), "reason": .string(reason),
                ])
        }
        return Outcome(delivered: false, left: dead.count)
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
