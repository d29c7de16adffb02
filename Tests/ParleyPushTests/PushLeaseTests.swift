import Foundation
import ParleyLiveSupport
import ParleyPostgres
import ParleyTestSupport
import Testing

@testable import ParleyPush

/// The outbox lease (migrations/0008): a worker takes at most `limit` due jobs, whatever the planner thinks of the
/// outbox.
@Suite struct PushLeaseTests {
    /// An outbox analyzed while it held only dead rows (0 rows on many pages, as after a backlog was pushed) and then
    /// filled: `IN (SELECT ... FOR UPDATE SKIP LOCKED)` became a nested loop that re-ran the locking sub-select for
    /// every job, and leased the whole backlog at once, quadratic in its length.
    @Test func aLeaseTakesAtMostItsLimitWhenTheOutboxLooksEmptyToThePlanner() async throws {
        try await withMigratedClient { client in
            try await client.withConnection { connection in
                try await connection.execute(
                    unsafeSQL: """
                        ALTER TABLE push_jobs SET (autovacuum_enabled = false);
                        INSERT INTO push_jobs (app_id, message_id) SELECT 1, g FROM generate_series(1, 20000) g;
                        DELETE FROM push_jobs;
                        ANALYZE push_jobs;
                        INSERT INTO push_jobs (app_id, message_id) SELECT 1, g FROM generate_series(1, 1000) g;
                        """)
            }
            let jobs = PushJobRepository(database: client)
            let first = try await jobs.lease(limit: 100, leaseSeconds: 30)
            #expect(first.count == 100)
            // The oldest due jobs, in order; the next lease takes the following ones.
            #expect(first.compactMap(\.messageId) == (1...100).map { Int64($0) })
            let second = try await jobs.lease(limit: 100, leaseSeconds: 30)
            #expect(second.compactMap(\.messageId) == (101...200).map { Int64($0) })
        }
    }
}
