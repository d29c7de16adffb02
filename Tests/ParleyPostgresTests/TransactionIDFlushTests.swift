import ParleyTestSupport
import Synchronization
import Testing

@testable import ParleyPostgres

/// Commits that finish when the test says so, in the order they started.
private final class GatedCommits: Sendable {
    private let gates = Mutex<[CheckedContinuation<Void, any Error>]>([])
    private let startedCount = Atomic<Int>(0)

    var started: Int { startedCount.load(ordering: .relaxed) }

    func commit() async throws {
        try await withCheckedThrowingContinuation { gate in
            gates.withLock { $0.append(gate) }
            startedCount.add(1, ordering: .relaxed)
        }
    }

    /// Ends the oldest commit still running, with `error` if given.
    func finish(failing error: (any Error)? = nil) {
        let gate = gates.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        if let error { gate?.resume(throwing: error) } else { gate?.resume() }
    }
}

/// Callers of one flush, and which of them have returned (or thrown).
private final class Callers: Sendable {
    private let returned = Mutex<[Int: Bool]>([:])

    func start(_ count: Int, from first: Int = 0, on flush: TransactionIDFlush, commits: GatedCommits) {
        for index in first..<(first + count) {
            Task {
                let succeeded = (try? await flush.flush { try await commits.commit() }) != nil
                self.returned.withLock { $0[index] = succeeded }
            }
        }
    }

    /// Caller index to whether it succeeded, for those that returned.
    var outcomes: [Int: Bool] { returned.withLock { $0 } }
}

private struct Refused: Error {}

@Suite struct TransactionIDFlushTests {
    @Test func callersThatArriveWhileACommitRunsShareTheNextCommit() async throws {
        let flush = TransactionIDFlush()
        let commits = GatedCommits()
        let callers = Callers()
        callers.start(1, on: flush, commits: commits)
        #expect(try await eventually { commits.started == 1 } != nil)
        callers.start(9, from: 1, on: flush, commits: commits)
        #expect(try await eventually { flush.waitingCount == 9 } != nil)
        #expect(commits.started == 1 && callers.outcomes.isEmpty)

        // The running commit may have begun before the nine asked: it answers only the first caller.
        commits.finish()
        #expect(try await eventually { commits.started == 2 } != nil)
        #expect(try await eventually { callers.outcomes == [0: true] } != nil)
        commits.finish()
        #expect(try await eventually { callers.outcomes.count == 10 } != nil)
        #expect(callers.outcomes.values.allSatisfy { $0 })
        #expect(flush.commitsStarted.load(ordering: .relaxed) == 2 && flush.waitingCount == 0)
    }

    @Test func aFailedCommitFailsItsCallersAndTheNextCallCommitsAgain() async throws {
        let flush = TransactionIDFlush()
        let commits = GatedCommits()
        let callers = Callers()
        callers.start(1, on: flush, commits: commits)
        #expect(try await eventually { commits.started == 1 && flush.waitingCount == 0 } != nil)
        commits.finish(failing: Refused())
        #expect(try await eventually { callers.outcomes == [0: false] } != nil)

        callers.start(1, from: 1, on: flush, commits: commits)
        #expect(try await eventually { commits.started == 2 } != nil)
        commits.finish()
        #expect(try await eventually { callers.outcomes == [0: false, 1: true] } != nil)
    }

    @Test func afterAFlushTheWALIsOnDiskPastWhereItWasWhenCalled() async throws {
        try await withTestClient { client, _ in
            func xid(_ sql: String) async throws -> UInt64 {
                try #require(UInt64(try await client.query(.init(unsafeSQL: sql))[0].decode(0, as: String.self)))
            }
            let horizon = try await xid("SELECT pg_snapshot_xmin(pg_current_snapshot())::text")
            // The test cluster commits asynchronously: only the flush's own setting makes its commit wait.
            let before = try await client.query("SELECT pg_current_wal_insert_lsn()::text AS lsn")[0]
                .decode("lsn", as: String.self)
            try await client.flushTransactionIDs(below: horizon)
            let flushed = try await client.query(
                "SELECT pg_wal_lsn_diff(pg_current_wal_flush_lsn(), \(before)::pg_lsn) >= 0 AS flushed")[0]
                .decode("flushed", as: Bool.self)
            #expect(flushed)
            #expect(client.transactionIDFlush.commitsStarted.load(ordering: .relaxed) == 1)
            let flushedXID = client.transactionIDFlush.flushed.load(ordering: .relaxed)
            #expect(flushedXID >= horizon)

            // Covered by that flush: nothing to do.
            try await client.flushTransactionIDs(below: horizon)
            try await client.flushTransactionIDs(below: flushedXID + 1)
            #expect(client.transactionIDFlush.commitsStarted.load(ordering: .relaxed) == 1)
            // A later xid is not.
            let later = try await xid("SELECT pg_current_xact_id()::text")
            #expect(later > flushedXID)
            try await client.flushTransactionIDs(below: later + 1)
            #expect(client.transactionIDFlush.commitsStarted.load(ordering: .relaxed) == 2)
            #expect(client.transactionIDFlush.flushed.load(ordering: .relaxed) > later)
        }
    }

    /// A new connection may reach another server (after a failover, a promoted standby that lacked the end of the
    /// WAL gives out lower xids again): what was flushed before is forgotten, and the next horizon is flushed anew.
    @Test func aReconnectedPoolFlushesAgain() async throws {
        try await withTestClient { client, url in
            let horizon = try #require(
                UInt64(
                    try await client.query("SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS x")[0]
                        .decode("x", as: String.self)))
            try await client.flushTransactionIDs(below: horizon)
            try await client.flushTransactionIDs(below: horizon)
            #expect(client.transactionIDFlush.commitsStarted.load(ordering: .relaxed) == 1)
            try await withAdminClient(url: url) { admin in
                _ = try await admin.query(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND application_name = 'parley_test'
                    """)
            }
            // A query on a pool whose connection was closed opens another (each event loop has its own pool, and a
            // query from a test task goes to the next one in turn, so query until one has).
            let forgotten = try await eventually {
                _ = try? await client.query("SELECT 1")
                return client.transactionIDFlush.flushed.load(ordering: .relaxed) == 0
            }
            #expect(forgotten != nil)
            try await client.flushTransactionIDs(below: horizon)
            #expect(client.transactionIDFlush.commitsStarted.load(ordering: .relaxed) == 2)
        }
    }
}
