import Foundation
import ParleyPostgres

/// The outbox (`webhook_jobs`, migrations/0022): leasing the events due, recording each attempt's outcome, the admin
/// API's listing and retry, pruning.
public struct WebhookJobRepository: Sendable {
    let database: PostgresClient

    public init(database: PostgresClient) { self.database = database }

    /// One outbox row: one event, or a group of events of the same kind queued together (`grouped_events`,
    /// migrations/0030), delivered and retried together.
    struct Job: Sendable, Equatable {
        var id: Int64
        var appId: Int64
        var event: String
        var key: String
        /// Each event's `data` (JSON), in order.
        var payloads: [[UInt8]]
        /// Whether the row holds a group of events (then each has its own id, `evt_<id>_<n>`), even of one.
        var grouped: Bool
        /// Attempts made before this lease.
        var attempts: Int
        var createdAt: Date

        /// The id of each event, stable across attempts: the idempotency key its backend deduplicates by.
        var eventIds: [String] {
            grouped ? payloads.indices.map { "evt_\(id)_\($0 + 1)" } : ["evt_\(id)"]
        }
    }

    /// Leases the events due of up to `keys` (app, key) pairs, for `leaseSeconds`: each pair's oldest pending event
    /// (its head, due and not leased) and up to `perKey - 1` events after it, in id order. A key's events are only
    /// ever leased from its head, so whoever holds the head holds the key, and its events go in order. Other workers
    /// skip the locked head (SKIP LOCKED while this runs, `leased_until` afterwards) and see it still pending, so
    /// they take nothing of that key: the events after the head need no row lock of their own (one write less per
    /// event). Attempts are counted when their outcome is recorded.
    func lease(keys: Int, perKey: Int, leaseSeconds: Int) async throws -> [Job] {
        let rows = try await database.query(
            """
            WITH heads AS (
                SELECT j.app_id, j.ordering_key FROM webhook_jobs j
                WHERE j.state = 'pending' AND j.next_attempt_at <= now()
                  AND (j.leased_until IS NULL OR j.leased_until < now())
                  AND NOT EXISTS (SELECT 1 FROM webhook_jobs o
                                  WHERE o.state = 'pending' AND o.app_id = j.app_id
                                    AND o.ordering_key = j.ordering_key AND o.id < j.id)
                ORDER BY j.next_attempt_at, j.id LIMIT \(keys) FOR UPDATE SKIP LOCKED),
            runs AS (
                SELECT run.id FROM heads h CROSS JOIN LATERAL (
                    SELECT o.id FROM webhook_jobs o
                    WHERE o.state = 'pending' AND o.app_id = h.app_id AND o.ordering_key = h.ordering_key
                    ORDER BY o.id LIMIT \(perKey)) run),
            leased AS (
                UPDATE webhook_jobs SET leased_until = now() + make_interval(secs => \(leaseSeconds))
                WHERE id IN (SELECT id FROM runs)
                RETURNING id, app_id, event, ordering_key, payload, messages, grouped_events, attempts, created_at)
            SELECT l.id, l.app_id, l.event, l.ordering_key, l.grouped_events IS NOT NULL AS grouped, l.attempts,
                   l.created_at, l.payload::text AS payload, m.message_id, m.conversation_id, m.seq, m.from_id, m.to_id,
                   m.chat_type, m.msg_type, m.content, m.extra, m.client_msg_id,
                   floor(extract(epoch FROM m.created_at) * 1000)::bigint AS message_created_at,
                   floor(extract(epoch FROM m.edited_at) * 1000)::bigint AS edited_at
            FROM leased l
            LEFT JOIN LATERAL unnest(l.messages) WITH ORDINALITY
                AS m(message_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content, extra,
                     client_msg_id, created_at, edited_at, ordinal) ON true
            ORDER BY l.id, m.ordinal
            """
        )
        // One result row per event, a job's in order: folded back into one job per outbox row. An event's data is
        // the row's JSON payload, or its message's JSON. Columns by position (a name is a search per column).
        var jobs: [Job] = []
        for row in rows {
            func column<T: PostgresDecodable>(_ column: LeaseColumn, as type: T.Type = T.self) throws -> T {
                try row.decode(column.rawValue, as: type)
            }
            let id: Int64 = try column(.id)
            let payload: [UInt8] =
                row.isNull(LeaseColumn.payload.rawValue)
                ? WebhookMessage(
                    id: try column(.messageId), conversationId: try column(.conversationId), seq: try column(.seq),
                    fromId: try column(.fromId), toId: try column(.toId), chatType: try column(.chatType),
                    msgType: try column(.msgType), content: try column(.content), extra: try column(.extra),
                    clientMsgId: try column(.clientMsgId), createdAt: try column(.messageCreatedAt),
                    editedAt: try column(.editedAt)
                ).eventData
                : Array(try column(.payload, as: String.self).utf8)
            if jobs.last?.id == id {
                jobs[jobs.count - 1].payloads.append(payload)
                continue
            }
            jobs.append(
                Job(
                    id: id, appId: try column(.appId), event: try column(.event), key: try column(.orderingKey),
                    payloads: [payload], grouped: try column(.grouped), attempts: try column(.attempts),
                    createdAt: try column(.createdAt)))
        }
        return jobs
    }

    /// The columns of the lease query, in its order (the query and this list change together).
    private enum LeaseColumn: Int {
        case id, appId, event, orderingKey, grouped, attempts, createdAt, payload
        case messageId, conversationId, seq, fromId, toId, chatType, msgType, content, extra, clientMsgId
        case messageCreatedAt, editedAt
    }

    /// Gives back leased events that were not attempted (a run stopped at a failure): due again at once.
    func release(jobIds: [Int64]) async throws {
        guard !jobIds.isEmpty else { return }
        _ = try await database.query(
            """
            UPDATE webhook_jobs SET leased_until = NULL
            WHERE id = ANY(\(PostgresTextArray(jobIds.map(String.init)))::bigint[]) AND state = 'pending'
            """)
    }

    /// The events of one call, delivered (one statement, whatever their number).
    func delivered(jobIds: [Int64], status: Int) async throws {
        _ = try await database.query(
            """
            UPDATE webhook_jobs SET state = 'delivered', leased_until = NULL, last_status = \(status),
                                    last_error = NULL, finished_at = now(), attempts = attempts + 1
            WHERE id = ANY(\(PostgresTextArray(jobIds.map(String.init)))::bigint[])
            """)
    }

    /// A failed attempt of one call's events: each is tried again after `delay`, or is dead once this was its
    /// `maxAttempts`th attempt (then its key's next event may go). Returns the events that went dead, as (id, event).
    func failed(
        jobIds: [Int64], status: Int?, error: String, retryAfter delay: Duration, maxAttempts: Int
    ) async throws -> [(id: Int64, event: String)] {
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        return try await database.query(
            """
            UPDATE webhook_jobs SET leased_until = NULL, last_status = \(status), last_error = \(String(error.prefix(500))),
                attempts = attempts + 1,
                state = CASE WHEN attempts + 1 >= \(maxAttempts) THEN 'dead' ELSE 'pending' END,
                finished_at = CASE WHEN attempts + 1 >= \(maxAttempts) THEN now() END,
                next_attempt_at = now() + make_interval(secs => \(seconds))
            WHERE id = ANY(\(PostgresTextArray(jobIds.map(String.init)))::bigint[])
            RETURNING id, event, state
            """
        ).compactMap { row in
            try row.decode("state", as: String.self) == "dead"
                ? (try row.decode("id", as: Int64.self), try row.decode("event", as: String.self)) : nil
        }
    }

    /// Events of apps whose webhook is gone or no longer wants them: deleted unsent.
    func drop(jobIds: [Int64]) async throws {
        guard !jobIds.isEmpty else { return }
        _ = try await database.query(
            "DELETE FROM webhook_jobs WHERE id = ANY(\(PostgresTextArray(jobIds.map(String.init)))::bigint[])")
    }

    /// The app's events in `state`, oldest first for pending ones and newest first otherwise, after `cursor` (an id).
    func list(appId: Int64, state: WebhookDelivery.State, limit: Int, after cursor: Int64?) async throws
        -> [WebhookDelivery]
    {
        let columns = """
            id, event, ordering_key, coalesce(grouped_events, 1) AS events, state, attempts, last_status, last_error,
            next_attempt_at, created_at, finished_at
            """
        // Two statements rather than an ORDER BY chosen at run time, so that each walks its index in order.
        let rows =
            state == .pending
            ? try await database.query(
                """
                SELECT \(unescaped: columns) FROM webhook_jobs
                WHERE app_id = \(appId) AND state = 'pending' AND id > coalesce(\(cursor)::bigint, 0)
                ORDER BY id LIMIT \(limit)
                """)
            : try await database.query(
                """
                SELECT \(unescaped: columns) FROM webhook_jobs
                WHERE app_id = \(appId) AND state = \(state.rawValue) AND state <> 'pending'
                  AND id < coalesce(\(cursor)::bigint, 9223372036854775807)
                ORDER BY id DESC LIMIT \(limit)
                """)
        return try rows.map(Self.decodeDelivery)
    }

    static func decodeDelivery(_ row: PostgresRow) throws -> WebhookDelivery {
        let state = WebhookDelivery.State(rawValue: try row.decode("state")) ?? .pending
        return WebhookDelivery(
            id: String(try row.decode("id", as: Int64.self)), event: try row.decode("event"),
            key: try row.decode("ordering_key"), events: try row.decode("events"), state: state,
            attempts: try row.decode("attempts"),
            lastStatus: try row.decode("last_status"), lastError: try row.decode("last_error"),
            nextAttemptAt: state == .pending ? try row.decode("next_attempt_at") : nil,
            createdAt: try row.decode("created_at"), finishedAt: try row.decode("finished_at"))
    }

    /// Outcome of a retry request.
    enum RetryOutcome: Equatable {
        case retried(WebhookDelivery)
        case notFound
        case notDead
    }

    /// Puts a dead event back (attempts from zero, due now). It is then the oldest pending event of its key again,
    /// so that key's later events wait for it.
    func retry(appId: Int64, id: Int64) async throws -> RetryOutcome {
        let rows = try await database.query(
            """
            UPDATE webhook_jobs SET state = 'pending', attempts = 0, next_attempt_at = now(), leased_until = NULL,
                                    finished_at = NULL
            WHERE app_id = \(appId) AND id = \(id) AND state = 'dead'
            RETURNING id, event, ordering_key, coalesce(grouped_events, 1) AS events, state, attempts, last_status,
                      last_error, next_attempt_at, created_at, finished_at
            """)
        if let row = rows.first { return .retried(try Self.decodeDelivery(row)) }
        let exists = try await database.query(
            "SELECT 1 AS found FROM webhook_jobs WHERE app_id = \(appId) AND id = \(id)")
        return exists.isEmpty ? .notFound : .notDead
    }

    /// Deletes delivered and dead events finished more than `hours` ago; returns how many.
    func prune(olderThanHours hours: Int) async throws -> Int {
        try await database.query(
            """
            DELETE FROM webhook_jobs
            WHERE state <> 'pending' AND finished_at < now() - make_interval(hours => \(hours)::integer)
            RETURNING id
            """
        ).count
    }

    /// Pending events (a grouped row counts each) and the age of the oldest, in seconds (the queue gauges).
    func backlog() async throws -> (pending: Int, oldestSeconds: Double) {
        let row = try await database.query(
            """
            SELECT coalesce(sum(coalesce(grouped_events, 1)), 0)::bigint AS pending,
                   coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS oldest
            FROM webhook_jobs WHERE state = 'pending'
            """)[0]
        return (try row.decode("pending", as: Int64.self).clampedInt, try row.decode("oldest"))
    }
}

extension Int64 {
    fileprivate var clampedInt: Int { Int(clamping: self) }
}
