import Foundation
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyMessaging

/// The indexer's batches (migrations/0037): each takes at most `batchSize` queued messages, whatever the planner thinks
/// of the queue.
@Suite struct MessageSearchIndexerTests {
    /// A queue analyzed while it held only dead rows (0 rows on many pages, as after a burst the indexer caught up
    /// with) and then filled: `IN (SELECT ... FOR UPDATE SKIP LOCKED)` became a nested loop that re-ran the locking
    /// sub-select for every queued row, and took the whole queue in one statement, quadratic in its length.
    @Test func aBatchTakesAtMostItsSizeWhenTheQueueLooksEmptyToThePlanner() async throws {
        try await withMigratedClient { client in
            try await client.withConnection { connection in
                try await connection.execute(
                    unsafeSQL: """
                        ALTER TABLE message_search_queue SET (autovacuum_enabled = false);
                        INSERT INTO message_search_queue (message_id) SELECT g FROM generate_series(1, 20000) g;
                        DELETE FROM message_search_queue;
                        ANALYZE message_search_queue;
                        INSERT INTO message_search_queue (message_id) SELECT g FROM generate_series(100001, 101200) g;
                        """)
            }
            let indexer = MessageSearchIndexer(database: client, logger: TestEnvironment.capturingLogger().logger)
            #expect(try await indexer.indexBatch() == MessageSearchIndexer.batchSize)
            let left = try await client.query("SELECT count(*) AS n FROM message_search_queue")
            #expect(try left[0].decode("n", as: Int.self) == 1200 - MessageSearchIndexer.batchSize)
            try await indexer.drain()
            let none = try await client.query("SELECT count(*) AS n FROM message_search_queue")
            #expect(try none[0].decode("n", as: Int.self) == 0)
        }
    }

    /// An edit whose transaction is still open when the indexer takes its batch (its trigger found the message
    /// already queued): the indexer passes over the message until the edit commits, and then indexes the new text
    /// (migrations/0043). Before, it indexed the old text and the message was never queued again.
    @Test func anEditInFlightIsIndexedOnceItCommits() async throws {
        try await withMigratedClient { client in
            let inserted = try await client.query(
                """
                INSERT INTO messages (app_id, conversation_id, seq, from_id, to_id, chat_type, msg_type, content,
                                      counted_prefix, created_at)
                VALUES (1, 'sg:t', 1, 'a', 't', 'group', 'text', '"hello world"', 1, now())
                RETURNING id
                """)
            let id = try inserted[0].decode("id", as: Int64.self)
            let indexer = MessageSearchIndexer(database: client, logger: TestEnvironment.capturingLogger().logger)
            // The edit on a client of its own: one client's pools are per event loop, and the indexer's transaction
            // must not wait for the connection the edit holds.
            try await withPostgresClient(client.configuration) { editing in
                try await editing.withConnection { editor in
                    try await editor.execute(unsafeSQL: "BEGIN")
                    try await editor.execute(
                        unsafeSQL:
                            "UPDATE messages SET content = '\"goodbye moon\"', edited_at = now() WHERE id = \(id)")
                    // The edit holds the queue row: this pass leaves it.
                    #expect(try await indexer.indexBatch() == 0)
                    try await editor.execute(unsafeSQL: "COMMIT")
                }
            }
            try await indexer.drain()
            let entry = try await client.query(
                """
                SELECT s.vector = parley_message_search_vector(m.conversation_id, m.msg_type, m.content) AS current
                FROM message_search s JOIN messages m ON m.id = s.message_id WHERE s.message_id = \(id)
                """)
            #expect(entry.count == 1)
            #expect(try entry.first?.decode("current", as: Bool.self) == true)
        }
    }
}
