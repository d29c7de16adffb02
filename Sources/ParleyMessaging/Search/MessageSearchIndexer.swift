import ParleyLifecycle
import ParleyObservability
import ParleyPostgres

/// Turns queued messages into search entries (migrations/0037), off the send path: a send, an edit or a revoke only
/// queues the message's id, and this worker tokenizes a batch of them. Any instance may run it (the
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
    /// One transaction, two statements: the first takes the batch off the queue and reads what is searchable in it;
    /// the terms are computed here (`MessageSearchTerms`); the second writes them. What the terms leave out (content of
    /// a shape the validators refuse, characters the two Unicode tables may disagree on) is left to the database's
    /// function (`parley_message_search_vector`, which the terms mirror).
    ///
    /// The batch's ids are taken in an `ARRAY(...)` sub-select, which runs once. As `IN (SELECT ... FOR UPDATE)` the
    /// planner, seeing a queue that was empty when last analyzed (it usually is), joined it as the inner side of a
    /// nested loop: the locking sub-select ran again for every queued row, and locked up to 500 rows each time.
    @discardableResult
    func indexBatch() async throws -> Int {
        try await database.withTransaction { connection in
            // Every row this transaction reads or writes is found by primary key. Statistics taken while `messages`
            // was small (a new deployment's first burst) had it planned as a scan, materialized and read again for
            // each message of the batch: a quarter of a second per batch, the queue drained at a few thousand
            // messages a second, and a single index lookup each is never worse.
            // The batch's queue rows stay locked until the commit: an edit or a revoke of one of its messages waits
            // for it (its trigger queues the message again). An instance that stalls between the two statements
            // loses the transaction after a few seconds instead of holding them.
            _ = try await connection.query(
                """
                SELECT set_config('enable_seqscan', 'off', true),
                       set_config('idle_in_transaction_session_timeout', '5s', true)
                """)
            let taken = try await connection.query(
                """
                WITH taken AS (
                    DELETE FROM message_search_queue q
                    WHERE q.message_id = ANY (ARRAY(SELECT message_id FROM message_search_queue ORDER BY message_id
                                                    LIMIT \(Self.batchSize) FOR UPDATE SKIP LOCKED))
                    RETURNING q.message_id)
                SELECT t.message_id, m.conversation_id, m.msg_type, m.content
                FROM taken t
                LEFT JOIN messages m ON m.id = t.message_id AND m.revoked_at IS NULL
                                    AND m.msg_type IN ('text', 'richText')
                """)
            guard !taken.isEmpty else { return 0 }
            var searchable: [String] = []
            var terms: [String?] = []
            var unsearchable: [String] = []
            searchable.reserveCapacity(taken.count)
            for row in taken {
                let id = String(try row.decode("message_id", as: Int64.self))
                guard let conversationId = try row.decode("conversation_id", as: String?.self),
                    let msgType = try row.decode("msg_type", as: String?.self),
                    let content = try row.decode("content", as: String?.self)
                else {
                    unsearchable.append(id)
                    continue
                }
                searchable.append(id)
                terms.append(
                    MessageSearchTerms.terms(conversationId: conversationId, msgType: msgType, content: content))
            }
            // Each side as its own array: a join on a flag of the batch let the planner guess half of it unsearchable
            // and scan all of `message_search` for every batch.
            _ = try await connection.query(
                """
                WITH removed AS (
                    DELETE FROM message_search WHERE message_id = ANY (\(PostgresTextArray(unsearchable))::bigint[]))
                INSERT INTO message_search (message_id, app_id, conversation_id, seq, created_at, vector)
                SELECT m.id, m.app_id, m.conversation_id, m.seq, m.created_at,
                       CASE WHEN s.terms IS NULL
                            THEN parley_message_search_vector(m.conversation_id, m.msg_type, m.content)
                            ELSE array_to_tsvector(string_to_array(s.terms, E'\\n')) END
                FROM unnest(\(PostgresTextArray(searchable))::bigint[], \(PostgresTextArray(optionals: terms))::text[])
                    AS s(message_id, terms)
                JOIN messages m ON m.id = s.message_id
                ON CONFLICT (message_id) DO UPDATE SET vector = EXCLUDED.vector
                """)
            return taken.count
        }
    }

    /// Indexes batch after batch until the queue is empty (what each pass of the worker does; tests call it to search
    /// what they just sent). A pass over an empty queue, which every instance makes now and then, is one statement
    /// rather than a batch's transaction of four round trips.
    public func drain() async throws {
        // By the key's index, which skips what earlier batches deleted; a scan of the table would read it all.
        let queued = try await database.query(
            "SELECT EXISTS (SELECT 1 FROM message_search_queue ORDER BY message_id LIMIT 1) AS queued")
        guard try queued[0].decode("queued", as: Bool.self) else { return }
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
