import Synchronization

/// Makes the transaction ids PostgreSQL has given out so far outlive a crash, for many callers at the cost of one
/// commit.
///
/// After a crash PostgreSQL gives out again the xids whose WAL never reached the disk (a rolled-back transaction's,
/// say), so a position in xid order read from a snapshot (a sync cursor) could later sit above rows committed under
/// those xids. A transaction that writes WAL and commits synchronously is flushed up to its commit record, and
/// recovery restarts above its xid; if that transaction began after the snapshot was read, its xid is at or above
/// every xid the snapshot could have seen given out. `flush` waits for such a commit: one that starts after the
/// call, shared by every caller that asked before it started (the write is a few bytes of WAL, the wait the flush).
final class TransactionIDFlush: Sendable {
    typealias Waiter = CheckedContinuation<Void, any Error>

    private struct State {
        var running = false
        var waiting: [Waiter] = []
    }

    private let state = Mutex(State())
    /// The xid of the newest commit known to be on disk (0: none yet, or forgotten).
    let flushed = Atomic<UInt64>(0)
    /// Commits started so far, and callers waiting for the next one (for tests).
    let commitsStarted = Atomic<Int>(0)
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Called when the pool reconnects: the server it reaches may not be the one that flushed (a failover to a
    /// standby that lacked the end of the WAL gives out lower xids again), so the next horizon is flushed anew.
    func forget() { flushed.store(0, ordering: .releasing) }

    /// Returns once a `commit` that started after this call has returned; throws its error.
    func flush(_ commit: @escaping @Sendable () async throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (waiter: Waiter) in
            let start = state.withLock { state in
                state.waiting.append(waiter)
                guard !state.running else { return false }
                state.running = true
                return true
            }
            if start { Task { await self.run(commit) } }
        }
    }

    /// A commit for everyone waiting when it starts; another while callers arrived meanwhile.
    private func run(_ commit: @Sendable () async throws -> Void) async {
        while let batch = state.withLock({ state -> [Waiter]? in
            guard !state.waiting.isEmpty else {
                state.running = false
                return nil
            }
            defer { state.waiting = [] }
            return state.waiting
        }) {
            commitsStarted.add(1, ordering: .relaxed)
            let result: Result<Void, any Error>
            do {
                try await commit()
                result = .success(())
            } catch {
                result = .failure(error)
            }
            for waiter in batch { waiter.resume(with: result) }
        }
    }
}

extension PostgresClient {
    /// Returns once every xid below `horizon` stays used after a crash (`TransactionIDFlush`): at once when an earlier
    /// flush already covers it, else after a commit that began after this call has been flushed to disk. Call it with
    /// a horizon read on the primary (a standby cannot write).
    public func flushTransactionIDs(below horizon: UInt64) async throws {
        // Recovery starts above a flushed commit's xid, so a horizon up to one above it is covered.
        guard horizon > transactionIDFlush.flushed.load(ordering: .acquiring) + 1 else { return }
        try await transactionIDFlush.flush { [self] in
            // The WAL message gives the statement an xid; the setting makes its commit wait for the local flush even
            // where the server's default (`off`) does not, and otherwise keeps the default: with synchronous
            // standbys, `on` would wait for them where the server chose `local` (and hang while they are down).
            let rows = try await query(
                """
                SELECT set_config('synchronous_commit',
                                  CASE current_setting('synchronous_commit') WHEN 'off' THEN 'local'
                                       ELSE current_setting('synchronous_commit') END, true),
                       pg_logical_emit_message(true, 'parley.xid_flush', ''), pg_current_xact_id()::text AS xid
                """)
            // Known only once the commit is on disk: `query` returns after it.
            if let xid = UInt64(try rows[0].decode("xid", as: String.self)) {
                _ = transactionIDFlush.flushed.max(xid, ordering: .releasing)
            }
        }
    }
}
