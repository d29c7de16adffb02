import ParleyLifecycle
import ParleyObservability
import ParleyPostgres

/// Turns queued messages into search entries (migrations/0037), off the send path: a send, an edit or a revoke only
/// queues the message's id, and this worker tokenizes a batch of them in one statement. Any instance may run it (the
/// coordinator does, the others now and then, so a backlog is shared): each batch takes its queue rows with SKIP LOCKED and deletes them in the transaction that writes their entries, so a
/// crash leaves them queued.
public struct MessageSearchIndexer: Sendable {
    let database: PostgresClient
    let logger: Logger

    static let batchSize = 500
    /// How soon a message becomes searchable when the queue is short.
    static let interval: Duration = .milliseconds(200)

    /// Indexes one batch; returns how many queued messages it took (`batchSize`: more may be waiting). A revoked
    /// message, or one no longer there, loses its entry.
    ///
    /// The batch's ids are taken in an `ARRAY(...)` sub-select, which runs once. As `IN (SELECT ... FOR UPDATE)` the
    /// planner, seeing a queue that was empty when last analyzed (it usually is), joined it as the inner side of a
    /// nested loop: the locking sub-select ran again for every queued row, and locked up to 500 rows each time.
    @discardableResult
    func indexBatch() async throws -> Int {
        let rows = try await database.query(
            """
            WITH taken AS (
                DELETE FROM message_search_queue q
                WHERE q.message_id = ANY (ARRAY(SELECT message_id FROM message_search_queue ORDER BY message_id
                                                LIMIT \(Self.batchSize) FOR UPDATE SKIP LOCKED))
                RETURNING q.message_id),
            source AS (
                SELECT t.message_id, m.app_id, m.conversation_id, m.seq, m.created_at,
                       CASE WHEN m.revoked_at IS NULL AND m.msg_type IN ('text', 'richText')
                            THEN parley_message_search_vector(m.conversation_id, m.msg_type, m.content) END AS vector
                FROM taken t LEFT JOIN messages m ON m.id = t.message_id),
            removed AS (
                DELETE FROM message_search s USING source
                WHERE s.message_id = source.message_id AND source.vector IS NULL),
            written AS (
                INSERT INTO message_search (message_id, app_id, conversation_id, seq, created_at, vector)
                SELECT message_id, app_id, conversation_id, seq, created_at, vector FROM source WHERE vector IS NOT NULL
                ON CONFLICT (message_id) DO UPDATE SET vector = EXCLUDED.vector)
            SELECT count(*) AS taken FROM taken
            """)
        return try rows[0].decode("taken", as: Int.self)
    }

    /// Indexes batch after batch until the queue is empty (what each pass of the worker does; tests call it to search
    /// what they just sent).
    public func drain() async throws {
        while try await indexBatch() == Self.batchSize {}
    }

    /// The worker: a pass every `interval` while the server serves (a shared queue: the coordinator's, the other
    /// instances' now and then).
    func service(coordinator: CoordinatorRole) -> PeriodicService<ContinuousClock> {
        let indexer = self
        return PeriodicService("message search indexer", every: Self.interval, on: .sharedQueue(coordinator)) {
            do {
                try await indexer.drain()
            } catch {
                indexer.logger.warning(
                    "message search indexing failed; the queue is kept and retried",
                    ["error": .string(String(describing: error))])
            }
        }
    }
}
