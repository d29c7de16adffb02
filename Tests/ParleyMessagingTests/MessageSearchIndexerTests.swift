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
}
