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

    /// What a pass did: how many outbox rows left the queue (delivered, dead or dropped), and whether its lease was
    /// full (as many keys, or as many rows of a key, as a lease takes), so that more may be waiting.
    struct Pass {
        var left: Int
        var full: Bool
    }

    /// One lease and its deliveries. An app with a batch size of 1 gets a call per event, one key's events after
    /// another and up to `concurrentDeliveries` keys at once; an app with a larger one gets its leased events in
    /// calls of up to that many, one call after another (so each key's events still arrive in order).
    @discardableResult
    func runPass() async -> Pass {
        let leased: [WebhookJobRepository.Job]
        do {
            leased = try await jobs.lease(
                keys: configuration.keysPerLease, perKey: configuration.eventsPerKey,
                leaseSeconds: configuration.leaseSeconds)
        } catch {
            logger.warning("leasing webhook events failed", ["error": .string(String(describing: error))])
            return Pass(left: 0, full: false)
        }
        guard !leased.isEmpty else { return Pass(left: 0, full: false) }
        let rowsPerKey = Dictionary(grouping: leased) { "\($0.appId):\($0.key)" }.mapValues(\.count)
        let full =
            rowsPerKey.count >= configuration.keysPerLease
            || rowsPerKey.values.contains { $0 >= configuration.eventsPerKey }
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
        let left = await withTaskGroup(of: Int.self) { group in
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
        return Pass(left: left, full: full)
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
    /// back, so no later event overtakes them). A call carries whole rows: a group queued before the batch size
    /// was lowered may exceed it. Returns how many rows left the queue.
    func processBatched(_ leased: [WebhookJobRepository.Job], appId: Int64) async -> Int {
        var done = 0
        let deadline = runDeadline()
        var remaining = leased[...]
        // Delivered rows are recorded together at the end of the run (one write, not one per call): a crash before
        // that delivers them again when their lease ends, with the same event ids.
        var delivered = DeliveredRows()
        do {
            while !remaining.isEmpty {
                if done > 0 && ContinuousClock.now > deadline { break }
                let size = settings.settings(appId: appId)?.batchSize ?? 1
                var batch: [WebhookJobRepository.Job] = []
                var events = 0
                while let next = remaining.first, batch.isEmpty || events + next.payloads.count <= size {
                    batch.append(next)
                    events += next.payloads.count
                    remaining = remaining.dropFirst()
                }
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
                let outcome = try await attempt(wanted, settings: current, appKey: appKey, delivered: &delivered)
                done += outcome.left
                if !outcome.delivered { break }
            }
            try await record(&delivered)
            try await jobs.release(jobIds: remaining.map(\.id))
        } catch {
            logger.warning(
                "webhook events failed; retried after their lease",
                ["app_id": .int(Int(appId)), "error": .string(String(describing: error))])
        }
        return done
    }

    /// Rows delivered but not yet recorded, by the status their call was answered with.
    struct DeliveredRows {
        var byStatus: [Int: [WebhookJobRepository.Job]] = [:]
    }

    /// Records `delivered` rows (a statement per answer status, nearly always one) and counts their events.
    private func record(_ delivered: inout DeliveredRows) async throws {
        for (status, rows) in delivered.byStatus.sorted(by: { $0.key < $1.key }) {
            try await jobs.delivered(jobIds: rows.map(\.id), status: status)
            for row in rows { metrics.delivered.labels(row.event).increment(by: row.payloads.count) }
        }
        delivered.byStatus = [:]
    }

    /// A call takes at most the app's timeout (10 s at most): starting none past half the lease ends a run well
    /// inside it, so no other worker can take a key while one of its events is still in flight here.
    private func runDeadline() -> ContinuousClock.Instant {
        ContinuousClock.now + .seconds(configuration.leaseSeconds) / 2
    }

    /// The app's settings and key when a call for `events` (rows, all of one app) can be made; nil when its webhook
    /// was removed, disabled or no longer wants a lone row's event after it was queued: then the rows are dropped
    /// unsent.
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

    /// How the calls of some rows ended: `delivered` (every call 2xx), and how many rows left the queue (all when
    /// delivered; those that went dead otherwise).
    struct Outcome {
        var delivered: Bool
        var left: Int
    }

    /// The calls carrying `rows`' events, their outcome recorded for the rows together. With a batch size of 1 each
    /// event goes alone in its envelope, one call after another (more than one only for a group queued before the
    /// batch size was lowered); otherwise all in one call, `{"events": [...]}`. The first call that fails fails
    /// them all: the retry sends each again, with its same event id.
    private func attempt(
        _ rows: [WebhookJobRepository.Job], settings current: WebhookSettings, appKey: String
    ) async throws -> Outcome {
        var delivered = DeliveredRows()
        let outcome = try await attempt(rows, settings: current, appKey: appKey, delivered: &delivered)
        try await record(&delivered)
        return outcome
    }

    /// `attempt`, leaving delivered rows in `delivered` for the caller to record.
    private func attempt(
        _ rows: [WebhookJobRepository.Job], settings current: WebhookSettings, appKey: String,
        delivered: inout DeliveredRows
    ) async throws -> Outcome {
        var envelopes: [(event: String, id: String, body: [UInt8])] = []
        for row in rows {
            for (eventId, payload) in zip(row.eventIds, row.payloads) {
                envelopes.append(
                    (
                        row.event, eventId,
                        WebhookCaller.envelope(
                            eventId: eventId, event: row.event, appKey: appKey, createdAt: row.createdAt,
                            attempt: row.attempts + 1, data: payload)
                    ))
            }
        }
        // The app's batch size decides the shape (not how many are ready), so its backend always gets the same one.
        let calls =
            current.batchSize == 1
            ? envelopes
            : [
                (
                    "batch", "batch_\(envelopes[0].id.dropFirst(4))_\(envelopes[envelopes.count - 1].id.dropFirst(4))",
                    WebhookCaller.batch(envelopes.map(\.body))
                )
            ]
        var failure: (status: Int?, reason: String)?
        var lastStatus = 200
        for call in calls {
            switch await caller.call(current, event: call.event, eventId: call.id, body: call.body) {
            case .success(let response) where (200...299).contains(response.status):
                lastStatus = response.status
                continue
            case .success(let response):
                failure = (response.status, "HTTP \(response.status)")
            case .failure(let error):
                failure = (nil, error.description)
            }
            break
        }
        let head = rows[0]
        guard let (status, reason) = failure else {
            delivered.byStatus[lastStatus, default: []] += rows
            return Outcome(delivered: true, left: rows.count)
        }
        let attempt = head.attempts + 1
        let delay = configuration.backoff(afterAttempts: attempt)
        let dead = try await jobs.failed(
            jobIds: rows.map(\.id), status: status, error: reason, retryAfter: delay,
            maxAttempts: configuration.maxAttempts)
        for row in rows {
            let died = dead.contains { $0.id == row.id }
            (died ? metrics.dead : metrics.failed).labels(row.event).increment(by: row.payloads.count)
            guard died else { continue }
            logger.warning(
                "webhook event dead",
                [
                    "app_id": .int(Int(head.appId)), "job_id": .int(Int(row.id)), "event": .string(row.event),
                    "events": .int(row.payloads.count), "reason": .string(reason),
                ])
        }
        if dead.count < rows.count {
            logger.info(
                "webhook call will retry",
                [
                    "job_id": .int(Int(head.id)), "events": .int(envelopes.count), "attempts": .int(attempt),
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
